// Package keys is the lab screen's own keys, declared once: the help bar
// and the full help read them, so they cannot drift from what the keys do.
package keys

import "github.com/charmbracelet/bubbles/key"

// KeyMap is every key of the lab screen, declared once. The help bar and
// the full help read it, so they cannot drift from what the keys do.
type KeyMap struct {
	// Selecting a node.
	NodeNext key.Binding
	NodePrev key.Binding
	NodeN    key.Binding // 1–9
	// Changing the lab: each runs one lab command.
	Kill       key.Binding
	KillLeader key.Binding // K: the leader of the selected node's partition, or of the first
	Restart    key.Binding
	Isolate    key.Binding
	Heal       key.Binding
	Pause      key.Binding
	Faster     key.Binding
	Slower     key.Binding
	Kafka      key.Binding // L: the Kafka listener on or off
	// The lesson.
	NextStep key.Binding
	PrevStep key.Binding
	Answer   key.Binding // a–d while a prediction waits
	Number   key.Binding // 0–9 while a question asks for a number: the answer's first digit
	Hint     key.Binding // t while a task is open: one way to meet its goal
	Lessons  key.Binding // back to the lesson picker, when the screen came from it
	Roster   key.Binding // w on a teacher's shared screen: who is connected
	// History.
	Back      key.Binding
	Forward   key.Binding
	BackEvent key.Binding
	NextEvent key.Binding
	Live      key.Binding
	// The screen.
	Prompt    key.Binding
	Focus     key.Binding
	FocusPrev key.Binding
	Help      key.Binding
	Quit      key.Binding
}

// Default returns the lab screen's keys.
func Default() *KeyMap {
	return &KeyMap{
		NodeNext: key.NewBinding(key.WithKeys("right"), key.WithHelp("←/→", "select node")),
		NodePrev: key.NewBinding(key.WithKeys("left"), key.WithHelp("←", "previous node")),
		NodeN: key.NewBinding(key.WithKeys("1", "2", "3", "4", "5", "6", "7", "8", "9"),
			key.WithHelp("1–9", "select node")),
		Kill:       key.NewBinding(key.WithKeys("k"), key.WithHelp("k", "kill node")),
		KillLeader: key.NewBinding(key.WithKeys("K"), key.WithHelp("K", "kill the leader")),
		Restart:    key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "restart node")),
		Isolate:    key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "isolate node")),
		Heal:       key.NewBinding(key.WithKeys("h"), key.WithHelp("h", "heal all links")),
		Pause:      key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "pause/resume")),
		Faster:     key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+/-", "speed")),
		Slower:     key.NewBinding(key.WithKeys("-", "_"), key.WithHelp("-", "slower")),
		Kafka:      key.NewBinding(key.WithKeys("L"), key.WithHelp("L", "Kafka on/off")),
		NextStep:   key.NewBinding(key.WithKeys("n"), key.WithHelp("n/p", "next/prev step")),
		PrevStep:   key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "previous step")),
		Answer: key.NewBinding(key.WithKeys("a", "b", "c", "d"),
			key.WithHelp("a–d", "answer"), key.WithDisabled()),
		Hint: key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "a hint for the task"), key.WithDisabled()),
		Number: key.NewBinding(key.WithKeys("0", "1", "2", "3", "4", "5", "6", "7", "8", "9"),
			key.WithHelp("0–9", "answer a number"), key.WithDisabled()),
		Lessons: key.NewBinding(key.WithKeys("backspace"), key.WithHelp("backspace", "back to the lessons"),
			key.WithDisabled()),
		Roster:    key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "who is connected"), key.WithDisabled()),
		Back:      key.NewBinding(key.WithKeys("["), key.WithHelp("[/]", "back/forward in time")),
		Forward:   key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "forward in history")),
		BackEvent: key.NewBinding(key.WithKeys("{"), key.WithHelp("{/}", "jump by event")),
		NextEvent: key.NewBinding(key.WithKeys("}"), key.WithHelp("}", "next event")),
		Live:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back to live"), key.WithDisabled()),
		Prompt:    key.NewBinding(key.WithKeys(":"), key.WithHelp(":", "command")),
		Focus:     key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next panel")),
		FocusPrev: key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous panel")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:      key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
	}
}

// ShortHelp is the help bar: the keys a learner needs first. The
// screen adds its panels' keys before the last ShortTail of them.
func (k *KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.NodeNext, k.Kill, k.KillLeader, k.Restart, k.Isolate, k.Heal, k.Pause,
		k.Answer, k.Number, k.Hint, k.NextStep, k.Back, k.Live, k.Prompt, k.Focus, k.Help, k.Quit}
}

// ShortTail and FullTail are how many of the screen's keys end the help
// bar and the full help's last column, after the panels' keys.
const (
	ShortTail = 4
	FullTail  = 2
)

// FullHelp is the '?' screen, one column per kind of key; the screen
// adds its panels' keys to the last column, before the last FullTail.
func (k *KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.NodeNext, k.NodeN, k.Kill, k.KillLeader, k.Restart, k.Isolate, k.Heal},
		{k.Pause, k.Faster, k.Kafka, k.NextStep, k.Answer, k.Number, k.Hint, k.Prompt, k.Help},
		{k.Back, k.BackEvent, k.Live, k.Focus, k.FocusPrev, k.Roster, k.Lessons, k.Quit},
	}
}
