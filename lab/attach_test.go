package lab

import (
	"database/sql"
	"path/filepath"
	"testing"
)

// A program's own database, attached, shows on the screens as a service
// with its tables as they are now, including one made after the attach.
func TestAttachDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE balances (account TEXT PRIMARY KEY, balance INTEGER); INSERT INTO balances VALUES ('account-3', 450)`); err != nil {
		t.Fatal(err)
	}
	l := newLab(t)
	if err := l.AttachDatabase("ledger", path, "your program's database"); err != nil {
		t.Fatal(err)
	}
	if err := l.AttachDatabase("ledger", path, "again"); err == nil {
		t.Error("a second service of the same name was attached")
	}
	if _, err := db.Exec(`CREATE TABLE processed (update_id TEXT PRIMARY KEY); INSERT INTO processed VALUES ('u1'), ('u2')`); err != nil {
		t.Fatal(err)
	}
	var ledger *ServiceState
	for _, s := range l.Snapshot().Services {
		if s.Name == "ledger" {
			ledger = &s
		}
	}
	if ledger == nil || ledger.State != "up" || ledger.Started != "your program's database" || len(ledger.Tables) != 2 {
		t.Fatalf("the attached database: %+v", ledger)
	}
	if b := ledger.Tables[0]; b.Name != "ledger.balances" || b.Total != 1 || len(b.Rows) != 1 || b.Rows[0][1] != "450" {
		t.Errorf("balances: %+v", b)
	}
	if p := ledger.Tables[1]; p.Name != "ledger.processed" || p.Total != 2 {
		t.Errorf("a table made after the attach: %+v", p)
	}
}
