// Package migrations holds the database schema as SQL files, applied in name
// order by bun's migrator.
package migrations

import "embed"

// FS holds the SQL migration files.
//
//go:embed *.sql
var FS embed.FS
