//go:build ignore

// Starter for the in-order challenge, with franz-go and SQLite. Run it
// from mqlab's folder with:
//
//	mqlab challenge in-order -- go run lessons/challenge/in-order/consumer.go
//
// Each record sets an account's balance: key account-3, value
// "seq=7 balance=450". As written it processes at least once and writes
// whatever balance it is handed, so a run that was paused wakes up and
// overwrites newer balances with the old updates it still holds. Make an
// older update change nothing.
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
	db, err := sql.Open("sqlite", "file:"+os.Getenv("MQLAB_DB")+"?_pragma=busy_timeout(15000)")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
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
			var seq, balance int
			if _, err := fmt.Sscanf(string(r.Value), "seq=%d balance=%d", &seq, &balance); err != nil {
				log.Fatalf("%s: %q: %v", r.Key, r.Value, err)
			}
			time.Sleep(work)
			if err := apply(db, string(r.Key), seq, balance); err != nil {
				log.Fatalf("apply %s: %v", r.Key, err) // not committed: it comes again
			}
			fmt.Printf("processed %s\n", r.Key)
			if err := cl.CommitRecords(ctx, r); err != nil {
				log.Printf("commit %s: %v", r.Key, err) // the group moved on: what we did may be done again
			}
		})
	}
}

// apply sets the account's balance.
// TODO: an update older than the one the account already has (a smaller
// seq) must change nothing.
func apply(db *sql.DB, account string, seq, balance int) error {
	_, err := db.Exec(`INSERT INTO balances (account, balance) VALUES (?, ?)
		ON CONFLICT (account) DO UPDATE SET balance = excluded.balance`, account, balance)
	return err
}

func millis(name string) time.Duration {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil {
		log.Fatalf("%s: %v", name, err)
	}
	return time.Duration(n) * time.Millisecond
}
