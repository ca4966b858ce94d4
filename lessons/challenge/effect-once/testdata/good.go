//go:build ignore

// A consumer whose charge and the record that it was made commit in one
// transaction: a redelivered order finds its record and charges nothing.
//
//	mqlab challenge effect-once -- go run lessons/challenge/effect-once/testdata/good.go
package main

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	_ "modernc.org/sqlite"
)

func main() {
	work := millis("MQLAB_WORK_MS")
	db, err := sql.Open("sqlite", "file:"+os.Getenv("MQLAB_DB")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS processed (order_key TEXT PRIMARY KEY)`); err != nil {
		log.Fatal(err)
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(strings.Split(os.Getenv("MQLAB_BOOTSTRAP"), ",")...),
		kgo.ClientID(os.Getenv("MQLAB_CLIENT_ID")),
		kgo.ConsumerGroup(os.Getenv("MQLAB_GROUP")),
		kgo.ConsumeTopics(os.Getenv("MQLAB_TOPIC")),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		kgo.SessionTimeout(millis("MQLAB_SESSION_MS")),
		kgo.HeartbeatInterval(millis("MQLAB_SESSION_MS")/10),
	)
	if err != nil {
		log.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	for {
		fetches := cl.PollFetches(ctx)
		fetches.EachError(func(topic string, p int32, err error) { log.Printf("fetch %s/%d: %v", topic, p, err) })
		fetches.EachRecord(func(r *kgo.Record) {
			time.Sleep(work)
			if err := charge(db, string(r.Key)); err != nil {
				log.Fatalf("charge %s: %v", r.Key, err) // not committed: it comes again
			}
			fmt.Printf("processed %s\n", r.Key)
			if err := cl.CommitRecords(ctx, r); err != nil {
				log.Printf("commit %s: %v", r.Key, err)
			}
		})
	}
}

// charge charges the order ₹450 unless the processed table says it was
// charged already; both rows commit together or not at all.
func charge(db *sql.DB, key string) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.Exec(`INSERT OR IGNORE INTO processed (order_key) VALUES (?)`, key)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil // charged before: a redelivery
	}
	if _, err := tx.Exec(`INSERT INTO charges (order_key, amount) VALUES (?, 450)`, key); err != nil {
		return err
	}
	return tx.Commit()
}

func millis(name string) time.Duration {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil {
		log.Fatalf("%s: %v", name, err)
	}
	return time.Duration(n) * time.Millisecond
}
