package panel

// ID names a panel. Tab moves the focus in the screen's reading order,
// which the layout knows; this order is the tabs' in a box showing all.
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
