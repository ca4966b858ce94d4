// Package lessons holds mqlab's lessons: the Markdown lesson format, its
// parser and validator, the runner that plays steps against a lab, and the
// embedded curriculum.
//
// # The format
//
// A lesson is a Markdown file. It starts with YAML front matter between two
// --- lines: id (lower-case letters, digits and dashes), title and concepts
// (a list) are required; summary and minutes are optional. Then come the
// steps, each a ## heading. A step is narrative plus fenced blocks, played
// in the order they are written:
//
//	```lab          commands of the command language, one a line (help lists
//	                them); they run when the block is reached
//	```task         what the learner must do: the instruction, then
//	                  key: how to do it with a key in the TUI (optional)
//	                  do: the command the learner would type (one or more)
//	                  wait: a condition that holds once it is done (one or more)
//	                  also: another way to the goal (several also: lines
//	                    are one way, done in turn)
//	                  decide: what the learner chooses, when the task is a
//	                    design decision: the goal is an outcome, and the
//	                    do: and also: lines are two of its right answers;
//	                    on a screen lab time stands still while the
//	                    learner types the choice, and the task ends when
//	                    they press n (or start the clock) after it
//	                the runner waits for the conditions, whoever makes them
//	                hold; played headless it types the do: commands itself
//	```predict      a question, then the choices as - [ ] text, the right one
//	                as - [x] text, then why: the explanation, shown after the
//	                learner answers; or, for a number, answer: 20 ± 4 (or
//	                ± 10%, then a unit: answer: 1,600 ± 10% a second) in
//	                place of the choices
//	```expect       conditions, one a line, each shown as ✓ or ✗ with the
//	                values the lab read; a trailing # text labels it
//
// A predict or expect block may say concept: NAME to count for one of the
// front matter's concepts; every concept needs at least one of each (a
// lesson with one concept need not say). Other fenced blocks (```sql) are
// narrative.
//
// lesson check warns about a prediction a learner could answer without
// reasoning: its right choice's words, or its number, already stand in
// its step's text before it, its step's heading or its own question, or
// another question asks nearly the same. A number under 100 counts only
// beside the thing it counts (its unit, or the word after the question's
// how many or which): "20 writes" does not give away 20 cashbacks. A predict block that says
// recall: REASON is meant to be recalled and is not warned about.
//
// Narrative can show what the lab measured. A placeholder is filled when
// its paragraph is reached, so it shows the values after the blocks above
// it ran:
//
//	{{hwm(orders/0)}}        a lab value: leader, epoch, hwm, leo, logstart,
//	                         their @n1 forms, state(X), or a checker field
//	{{hwm(orders/0) - 1}}    plus or minus a number
//	{{lost as lost_acks1}}   shown, and kept under a name
//	{{lost_acks1}}           a value kept earlier in the lesson
//
// so a table can compare values measured in different steps. A number
// kept under a name can also be compared with in an expect block, a
// wait: or a lab block's wait and expect, plus or minus a number:
//
//	n1 leads at epoch {{epoch(orders/0) as before}}.
//	…
//	epoch(orders/0) > before          # a new leader, a new epoch
//	epoch(orders/0) == before + 1
//
// A short example:
//
//	---
//	id: acks-one
//	title: What acks=1 loses
//	concepts: [acks-1]
//	---
//
//	## The leader's word
//
//	```lab
//	cluster nodes=3
//	topic create orders partitions=1
//	elect n1 orders/0
//	partition n1 | n2,n3
//	produce orders key=881 acks=1
//	```
//
//	```predict
//	n1 dies now. Is the acks=1 write safe?
//	- [ ] yes, n1 confirmed it
//	- [x] no, only n1 held it
//	why: acks=1 answers before any follower has a copy.
//	```
//
//	```task
//	Kill n1.
//	key: select n1 and press k
//	do: kill n1
//	wait: state(n1) == down
//	```
//
//	```lab
//	wait leader(orders/0) != none
//	restart n1
//	heal
//	wait leo(orders/0@n1) == hwm(orders/0)
//	```
//
//	The checker counts {{lost}} lost.
//
//	```expect
//	lost == 1     # the confirmed write is gone
//	```
//
// Parse reads a file and Check validates it, reporting every problem with
// its line (and column, for the command language's errors): front matter,
// blocks, commands and conditions, the topics, partitions and nodes they
// name at that point of the lesson, and placeholders.
//
// # Playing
//
// A Runner plays a lesson one block at a time for the TUI: Next, then
// DoTask or AwaitTask at a task, Answer at a prediction, NextStep at the end
// of a step (refused while an expectation failed, unless forced); Goto
// starts any step again by replaying the lesson on a fresh cluster.
// PlayHeadless prints a whole lesson as a transcript. A Store keeps the
// learner's progress in the XDG state directory.
package lessons
