package store

// MigrateFS is migrateFS, for tests that migrate a set of their own.
var MigrateFS = migrateFS
