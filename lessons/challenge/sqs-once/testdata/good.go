//go:build ignore

// A worker that keeps each job's message hidden while it works on it
// (ChangeMessageVisibility, renewed before it runs out), and records the
// message's id in the same transaction as the charge: a message that
// comes again finds its record and charges nothing.
//
//	mqlab challenge sqs-once -- go run lessons/challenge/sqs-once/testdata/good.go
package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strconv"
	"time"

	_ "modernc.org/sqlite"
)

// workers is how many jobs the program works at once.
const workers = 2

func main() {
	work := millis("MQLAB_WORK_MS")
	db, err := sql.Open("sqlite", "file:"+os.Getenv("MQLAB_DB")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS processed (message_id TEXT PRIMARY KEY)`); err != nil {
		log.Fatal(err)
	}
	q := &queue{endpoint: os.Getenv("MQLAB_SQS_ENDPOINT"), client: os.Getenv("MQLAB_CLIENT_ID")}
	q.url = q.urlOf(os.Getenv("MQLAB_QUEUE"))
	for range workers {
		go func() {
			for {
				msgs, err := q.receive()
				if err != nil {
					log.Printf("receive: %v", err)
					time.Sleep(100 * time.Millisecond)
					continue
				}
				for _, m := range msgs {
					stop := q.keepHidden(m)
					time.Sleep(work) // the job's work: longer than the visibility timeout
					err := charge(db, m.MessageId, m.Body)
					stop()
					if err != nil {
						log.Fatalf("charge %s: %v", m.Body, err) // not deleted: it comes again
					}
					fmt.Printf("processed %s\n", m.Body)
					if err := q.call("DeleteMessage", map[string]any{"QueueUrl": q.url, "ReceiptHandle": m.ReceiptHandle}, nil); err != nil {
						log.Printf("delete %s: %v", m.Body, err)
					}
				}
			}
		}()
	}
	select {}
}

// charge charges the job 450 unless its message was charged before: the
// record that it was and the charge commit together, or not at all.
func charge(db *sql.DB, id, job string) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after a commit, nothing to undo
	res, err := tx.Exec(`INSERT OR IGNORE INTO processed (message_id) VALUES (?)`, id)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 1 {
		if _, err := tx.Exec(`INSERT INTO charges (job, amount) VALUES (?, 450)`, job); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// keepHidden keeps m hidden from other workers until the function it
// returns is called: it sets m's visibility timeout to a second at once,
// and again every 300 ms. A renewal that fails is logged: the job may
// come back, and its record will keep it from being charged twice.
func (q *queue) keepHidden(m message) (stop func()) {
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		tick := time.NewTicker(300 * time.Millisecond)
		defer tick.Stop()
		for {
			in := map[string]any{"QueueUrl": q.url, "ReceiptHandle": m.ReceiptHandle, "VisibilityTimeout": 1}
			if err := q.call("ChangeMessageVisibility", in, nil); err != nil {
				log.Printf("extend %s: %v", m.Body, err)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); <-ended }
}

// queue is an SQS queue reached with the JSON protocol.
type queue struct{ endpoint, client, url string }

// message is a message a receive handed out.
type message struct{ MessageId, ReceiptHandle, Body string }

// urlOf asks for the queue's URL until it is answered.
func (q *queue) urlOf(name string) string {
	for {
		var out struct{ QueueUrl string }
		err := q.call("GetQueueUrl", map[string]any{"QueueName": name}, &out)
		if err == nil {
			return out.QueueUrl
		}
		log.Printf("get queue url: %v", err)
		time.Sleep(100 * time.Millisecond)
	}
}

// receive takes one message, waiting up to a second for it.
func (q *queue) receive() ([]message, error) {
	var out struct{ Messages []message }
	err := q.call("ReceiveMessage", map[string]any{"QueueUrl": q.url, "MaxNumberOfMessages": 1, "WaitTimeSeconds": 1}, &out)
	return out.Messages, err
}

// call makes one SQS request and decodes its answer into out.
func (q *queue) call(action string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPost, q.endpoint+"/", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	req.Header.Set("x-mqlab-client", q.client)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", action, resp.Status, answer)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(answer, out)
}

func millis(name string) time.Duration {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil {
		log.Fatalf("%s: %v", name, err)
	}
	return time.Duration(n) * time.Millisecond
}
