package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The Kafka phase reads back with kgo in a process of its own: decoding
// is most of a consume's work, and in the broker's own process the
// client's allocations fault in fresh pages at a rate that depends on
// the broker's heap (a 300 MB one halved kfake's rate), so that the
// figure measured the client's memory more than the broker. The child is
// the same executable, started with consumerEnv set: mqlab's main, and
// TestMain of every test binary that runs the phase, call
// ServeConsumer first.

// consumerEnv holds the seeds and the count a consumer process reads:
// "host:port,host:port/N".
const consumerEnv = "MQLAB_BENCH_CONSUMER"

// ServeConsumer returns at once unless this process was started as the
// Kafka phase's consumer; then it reads the records it was given from
// the start of orders/0, prints its rate on standard output and exits.
func ServeConsumer() {
	spec := os.Getenv(consumerEnv)
	if spec == "" {
		return
	}
	rate, err := readOrders(spec)
	if err != nil {
		fmt.Fprintf(os.Stderr, "the bench's consumer: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("msgs/s %f\n", rate)
	os.Exit(0)
}

// readOrders is the consumer's work: spec is consumerEnv's value.
func readOrders(spec string) (float64, error) {
	seeds, count, _ := strings.Cut(spec, "/")
	n, err := strconv.Atoi(count)
	if err != nil || n <= 0 || seeds == "" {
		return 0, fmt.Errorf("%s=%q: want host:port,…/N, N above 0", consumerEnv, spec)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(seeds, ",")...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"orders": {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	for got := 0; got < n; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			return 0, fmt.Errorf("after %d of %d records: %w", got, n, err)
		}
		got += fs.NumRecords()
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// consumeInChild reads n records of orders/0 from seeds with kgo in a
// child process (see ServeConsumer): the rate it read at, and the CPU
// time the child used.
func consumeInChild(ctx context.Context, seeds []string, n int) (Rate, error) {
	exe, err := os.Executable()
	if err != nil {
		return Rate{}, fmt.Errorf("the consumer process: %w", err)
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), consumerEnv+"="+strings.Join(seeds, ",")+"/"+strconv.Itoa(n))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return Rate{}, fmt.Errorf("the consumer process: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	for line := range strings.Lines(string(out)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "msgs/s "); ok {
			rate, err := strconv.ParseFloat(rest, 64)
			if err != nil || rate <= 0 {
				return Rate{}, fmt.Errorf("the consumer process said %q", line)
			}
			return Rate{Messages: n, Elapsed: time.Duration(float64(n) / rate * float64(time.Second)), CPU: cpu}, nil
		}
	}
	return Rate{}, fmt.Errorf("the consumer process said no rate: %q", out)
}
