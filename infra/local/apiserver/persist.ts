/**
 * Durable state in SQLite (node:sqlite): one row per object, plus the resourceVersion counter.
 * Writes are synchronous and committed with synchronous=FULL before the HTTP response is sent,
 * so an acknowledged write survives kill -9, and resourceVersions keep increasing after restart.
 */
import { DatabaseSync } from 'node:sqlite';
import type { Persistence } from './store.ts';

export function sqlitePersistence(file: string): Persistence {
  const db = new DatabaseSync(file);
  db.exec(`
    PRAGMA journal_mode = WAL;
    PRAGMA synchronous = FULL;
    CREATE TABLE IF NOT EXISTS objects (resource TEXT NOT NULL, key TEXT NOT NULL, json TEXT NOT NULL, PRIMARY KEY (resource, key));
    CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL);
  `);
  const upsert = db.prepare(
    'INSERT INTO objects (resource, key, json) VALUES (?, ?, ?) ON CONFLICT(resource, key) DO UPDATE SET json = excluded.json',
  );
  const del = db.prepare('DELETE FROM objects WHERE resource = ? AND key = ?');
  const setRv = db.prepare(
    "INSERT INTO meta (k, v) VALUES ('rv', ?) ON CONFLICT(k) DO UPDATE SET v = excluded.v",
  );
  const tx = (fn: () => void) => {
    db.exec('BEGIN IMMEDIATE');
    try {
      fn();
      db.exec('COMMIT');
    } catch (e) {
      db.exec('ROLLBACK');
      throw e;
    }
  };
  return {
    save(resource, key, obj, rv) {
      tx(() => {
        upsert.run(resource, key, JSON.stringify(obj));
        setRv.run(rv);
      });
    },
    remove(resource, key, rv) {
      tx(() => {
        del.run(resource, key);
        setRv.run(rv);
      });
    },
    load() {
      const row = db.prepare("SELECT v FROM meta WHERE k = 'rv'").get() as { v: number } | undefined;
      const rows = db.prepare('SELECT resource, json FROM objects').all() as {
        resource: string;
        json: string;
      }[];
      return {
        rv: row ? Number(row.v) : 0,
        objects: rows.map((r) => ({ resource: r.resource, obj: JSON.parse(r.json) })),
      };
    },
    close() {
      db.close();
    },
  };
}
