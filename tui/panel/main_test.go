package panel

import (
	"strings"
	"testing"

	"github.com/mqlab/mqlab/tui/internal/labtest"
	"github.com/mqlab/mqlab/tui/internal/screentest"
)

func TestMain(m *testing.M) { screentest.Main(m) }

// What the panels' tests draw: the recorded scene and hand-made states.
var (
	golden            = screentest.Golden
	checkSize         = screentest.CheckSize
	scene             = screentest.Scene
	sceneEnd          = screentest.End
	sceneView         = screentest.View
	sceneFrame        = screentest.FrameOf
	demoStart         = labtest.DemoStart
	labShapedState    = screentest.LabShaped
	lessonBlocksState = screentest.LessonBlocks
	flashSale         = labtest.FlashSale
	outboxSnapshot    = labtest.Outbox
	bigState          = screentest.Big
)

func lines(s string) []string { return strings.Split(s, "\n") }
