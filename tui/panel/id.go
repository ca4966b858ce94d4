package panel

// ID names a panel; the order is the order tab moves focus in.
type ID int

const (
	LessonID ID = iota
	ClusterID
	GroupsID
	QueuesID
	ServicesID
	TimelineID
	CheckerID
	ChartID
	RaftID
	Count // how many panels there are
)
