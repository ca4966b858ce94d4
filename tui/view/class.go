package view

// Roster is, on a teacher's shared screen, who is connected to the class
// and how many have answered the question on screen.
type Roster struct {
	Students []Student
	// Question: a question is on screen (open or revealed); Answered and
	// Following count its answers and the students who can give one.
	Question  bool
	Answered  int
	Following int
}

// Student is one person connected to the class (their sessions, however
// many, count once).
type Student struct {
	Name     string // "ada", or "ada (SHA256:Qm9…)" when two share a user
	Follows  bool   // follows the teacher's lab; else has a lab of their own
	Answered bool   // answered the question on screen
	Sessions int
}
