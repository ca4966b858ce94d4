// Package lessons holds mqlab's lessons: the Markdown lesson format, its
// parser and validator, the runner that plays steps against a lab, and the
// embedded curriculum.
package lessons
