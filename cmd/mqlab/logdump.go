package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mqlab/mqlab/broker/partlog"
)

func logCmd() *cobra.Command {
	log := &cobra.Command{
		Use:   "log",
		Short: "Read the segment files a lab writes (see mqlab script --keep-logs)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return fmt.Errorf("name what to do: mqlab log dump FILE")
		},
	}
	var records bool
	dump := &cobra.Command{
		Use:   "dump FILE",
		Short: "Print a segment file (.log, .index or .timeindex) as Kafka's kafka-dump-log does",
		Long: `dump prints one segment file of a partition's folder, such as
n2/orders-0/00000000000000000000.log: for a .log every record batch with its
base and last offset, record count, leader epoch, position, size and whether
its CRC-32C holds (--records adds each record); for an .index its offset →
position entries; for a .timeindex its timestamp → offset entries. Kafka's
own segment files can be read the same way.

Exit status: 0 when the file is whole; 2 when it is damaged — a batch whose
CRC fails, records that do not decode, a torn tail that is not a whole batch
or entry — after printing everything that can be read, with the damage
listed on standard error; 1 when it cannot be read or is not a segment file.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fi, err := os.Stat(args[0])
			if err != nil {
				return err
			}
			if fi.IsDir() {
				return fmt.Errorf("%s is a folder; name one of its segment files, like %s", args[0], partlog.SegmentFileName(0, partlog.LogSuffix))
			}
			if _, err := partlog.DumpFile(args[0], nil, false); err != nil {
				return err
			}
			data, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			d, err := partlog.Describe(args[0], data, records)
			if err != nil {
				return err
			}
			for _, l := range d.Lines {
				fmt.Fprintln(cmd.OutOrStdout(), l)
			}
			if n := len(d.Damage); n > 0 {
				damage := d.Damage[:min(n, 5)]
				if n > len(damage) {
					damage = append(damage, fmt.Sprintf("%d more", n-len(damage)))
				}
				return exitStatus{fmt.Errorf("%s is damaged: %s", args[0], strings.Join(damage, "; ")), 2}
			}
			return nil
		},
	}
	dump.Flags().BoolVar(&records, "records", false, "print every record under its batch")
	log.AddCommand(dump)
	return log
}
