package lessons

import "fmt"

// Said is a learner's answer to a prediction: a choice, as shown (0 is
// a), or a number for a question that asks for one.
type Said struct {
	Choice  int // -1 for a number
	Number  float64
	Numeric bool
}

// ParseAnswer reads what a learner said to a question: one of the letters
// of its choices (as many as shown), or, when it asks for a number
// (numeric), the number. The player, a class's tally and the screen's
// answer keys all read answers with it.
func ParseAnswer(said string, choices int, numeric bool) (Said, error) {
	if numeric {
		x, err := ParseNumber(said)
		if err != nil {
			return Said{}, err
		}
		return Said{Choice: -1, Number: x, Numeric: true}, nil
	}
	if len(said) != 1 || said[0] < 'a' || int(said[0]-'a') >= choices {
		return Said{}, fmt.Errorf("predict takes a letter from a to %c, not %q", 'a'+choices-1, said)
	}
	return Said{Choice: int(said[0] - 'a')}, nil
}

// Right grades the answer: the right choice (answer, in the same order
// as the answer's choice), or a number within n's tolerance.
func (a Said) Right(answer int, n *Number) bool {
	if a.Numeric {
		return n != nil && n.Within(a.Number)
	}
	return a.Choice >= 0 && a.Choice == answer
}
