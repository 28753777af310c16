# SPDX-License-Identifier: MIT
"""The run store: SQLite by default, PostgreSQL when the URL says so, one schema for both.

What it owns: the schema and its migrations, and every SQL statement of fracregress. A run is
one benchmark run: its commit, dirty flag, date, the machine it ran on (a fingerprint row
shared by runs), the device properties and parameters, every slice of every metric (not just
a median), and the per-stage log2 histograms of its traced slice. Migrations are numbered;
`schema_version` holds the highest one applied, and opening a store applies the missing ones
in order, in one transaction each.

URLs: a plain path or `sqlite:///path` (SQLite), `postgresql://...` or `postgres://...`
(psycopg2; the URL goes to libpq as it is).
"""

import json
import sqlite3
import time

# Each migration: (version, [statements]). "{id}" becomes the dialect's auto-increment
# primary key, "{blob}" its text type for JSON. Never edit a released migration: add one.
MIGRATIONS = [
    (1, [
        """CREATE TABLE machines (
            id {id},
            fingerprint TEXT NOT NULL UNIQUE,
            cpu_model TEXT, cores INTEGER, kernel TEXT, qemu_hash TEXT,
            info {blob})""",
        """CREATE TABLE runs (
            id {id},
            commit_id TEXT NOT NULL,
            dirty INTEGER NOT NULL,
            date TEXT NOT NULL,
            machine_id INTEGER REFERENCES machines(id),
            device {blob},
            params {blob},
            source TEXT)""",
        """CREATE TABLE samples (
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            metric TEXT NOT NULL,
            slice INTEGER NOT NULL,
            value DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (run_id, metric, slice))""",
    ]),
    # 2: metric metadata (unit, which direction is better), per-stage histograms, and
    # named baselines (`fracregress bless`).
    (2, [
        """CREATE TABLE metrics (
            name TEXT PRIMARY KEY,
            unit TEXT,
            better TEXT NOT NULL DEFAULT 'lower')""",
        """CREATE TABLE stage_hists (
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            stage TEXT NOT NULL,
            bucket_low BIGINT NOT NULL,
            bucket_high BIGINT,
            count BIGINT NOT NULL,
            PRIMARY KEY (run_id, stage, bucket_low))""",
        """CREATE TABLE stage_stats (
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            stage TEXT NOT NULL,
            count BIGINT NOT NULL,
            sum_ns DOUBLE PRECISION,
            PRIMARY KEY (run_id, stage))""",
        """CREATE TABLE baselines (
            name TEXT PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES runs(id),
            blessed_at TEXT NOT NULL,
            note TEXT)""",
    ]),
    # 3: a run's label (e.g. "base", "head" of one interleaved A/B run) and the index the
    # history is read in.
    (3, [
        "ALTER TABLE runs ADD COLUMN label TEXT",
        "CREATE INDEX runs_by_date ON runs (date, id)",
        "CREATE INDEX samples_by_metric ON samples (metric, run_id)",
    ]),
]
LATEST = MIGRATIONS[-1][0]


# tools/regress/regress --param mode=... of runs that are experiments on the device model.
EXPERIMENT_MODES = ("inject", "aa")


class StoreError(Exception):
    pass


class Store:
    """One connection; `?` placeholders everywhere (translated for psycopg2)."""

    def __init__(self, url, upto=LATEST):
        self.url = url
        if url.startswith(("postgresql://", "postgres://")):
            try:
                import psycopg2
            except ImportError as e:
                raise StoreError(f"{url}: python3-psycopg2 is not installed ({e})")
            try:
                self.conn = psycopg2.connect(url)
            except psycopg2.Error as e:
                raise StoreError(f"cannot connect to {url}: {str(e).strip()}")
            self.dialect = "postgresql"
        else:
            path = url[len("sqlite:///"):] if url.startswith("sqlite:///") else url
            if "://" in path:
                raise StoreError(f"{url}: not a path, sqlite:/// or postgresql:// URL")
            try:
                self.conn = sqlite3.connect(path)
            except sqlite3.Error as e:
                raise StoreError(f"cannot open {path}: {e}")
            self.conn.execute("PRAGMA foreign_keys = ON")
            self.dialect = "sqlite"
        self.migrate(upto)

    def close(self):
        self.conn.close()

    # ---- SQL helpers ----
    def _sql(self, q):
        return q.replace("?", "%s") if self.dialect == "postgresql" else q

    def execute(self, q, args=()):
        cur = self.conn.cursor()
        cur.execute(self._sql(q), args)
        return cur

    def query(self, q, args=()):
        return self.execute(q, args).fetchall()

    def _ddl(self, stmt):
        if self.dialect == "postgresql":
            return stmt.format(id="BIGSERIAL PRIMARY KEY", blob="TEXT")
        return stmt.format(id="INTEGER PRIMARY KEY AUTOINCREMENT", blob="TEXT")

    # ---- schema ----
    def version(self):
        try:
            rows = self.query("SELECT version FROM schema_version")
        except Exception:
            self.conn.rollback()
            return 0
        return rows[0][0] if rows else 0

    def migrate(self, upto=LATEST):
        """Apply the migrations above the store's version, up to `upto`, in order."""
        have = self.version()
        if have > LATEST:
            raise StoreError(f"{self.url}: schema version {have} is newer than this "
                             f"fracregress knows ({LATEST})")
        if have == 0:
            self.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
            self.execute("INSERT INTO schema_version VALUES (0)")
            self.conn.commit()
        for ver, stmts in MIGRATIONS:
            if have < ver <= upto:
                try:
                    for s in stmts:
                        self.execute(self._ddl(s))
                    self.execute("UPDATE schema_version SET version = ?", (ver,))
                    self.conn.commit()
                except Exception as e:
                    self.conn.rollback()
                    raise StoreError(f"{self.url}: migration {ver} failed: {e}")

    def tables(self):
        if self.dialect == "postgresql":
            rows = self.query("SELECT tablename FROM pg_tables WHERE schemaname = "
                              "current_schema()")
        else:
            rows = self.query("SELECT name FROM sqlite_master WHERE type = 'table' AND "
                              "name NOT LIKE 'sqlite_%'")
        return sorted(r[0] for r in rows)

    # ---- writing ----
    def _insert_id(self, q, args):
        return self.execute(q + " RETURNING id", args).fetchone()[0]

    def machine_id(self, m):
        """Row id of machine fingerprint `m` (a dict from machine.py), inserted if new."""
        rows = self.query("SELECT id FROM machines WHERE fingerprint = ?", (m["fingerprint"],))
        if rows:
            return rows[0][0]
        return self._insert_id(
            "INSERT INTO machines (fingerprint, cpu_model, cores, kernel, qemu_hash, info) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (m["fingerprint"], m.get("cpu_model"), m.get("cores"), m.get("kernel"),
             m.get("qemu_hash"), json.dumps(m, sort_keys=True)))

    def add_run(self, run):
        """Store one run (the dict format of README.md, "Run files"); returns its id."""
        try:
            mid = self.machine_id(run["machine"])
            rid = self._insert_id(
                "INSERT INTO runs (commit_id, dirty, date, machine_id, device, params, source, "
                "label) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (run["commit"], 1 if run.get("dirty") else 0, run["date"], mid,
                 json.dumps(run.get("device", {}), sort_keys=True),
                 json.dumps(run.get("params", {}), sort_keys=True), run.get("source"),
                 run.get("label")))
            for name, m in run.get("metrics", {}).items():
                self._metric(name, m.get("unit"), m.get("better", "lower"))
                for i, v in enumerate(m["slices"]):
                    self.execute("INSERT INTO samples (run_id, metric, slice, value) "
                                 "VALUES (?, ?, ?, ?)", (rid, name, i, float(v)))
            for stage, h in run.get("stages", {}).items():
                self.execute("INSERT INTO stage_stats (run_id, stage, count, sum_ns) "
                             "VALUES (?, ?, ?, ?)", (rid, stage, int(h["count"]),
                                                     h.get("sum_ns")))
                for b in h["buckets"]:
                    if b["count"]:
                        self.execute("INSERT INTO stage_hists (run_id, stage, bucket_low, "
                                     "bucket_high, count) VALUES (?, ?, ?, ?, ?)",
                                     (rid, stage, int(b["low"]), b.get("high"), int(b["count"])))
            self.conn.commit()
        except Exception:
            self.conn.rollback()
            raise
        return rid

    def _metric(self, name, unit, better):
        if better not in ("lower", "higher"):
            raise StoreError(f"metric {name}: better must be 'lower' or 'higher', not {better!r}")
        if not self.query("SELECT 1 FROM metrics WHERE name = ?", (name,)):
            self.execute("INSERT INTO metrics (name, unit, better) VALUES (?, ?, ?)",
                         (name, unit, better))

    def bless(self, run_id, name="default", note=None):
        self.run(run_id)        # raises if absent
        self.execute("DELETE FROM baselines WHERE name = ?", (name,))
        self.execute("INSERT INTO baselines (name, run_id, blessed_at, note) VALUES (?, ?, ?, ?)",
                     (name, run_id, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), note))
        self.conn.commit()

    # ---- reading ----
    def baseline(self, name="default"):
        rows = self.query("SELECT run_id FROM baselines WHERE name = ?", (name,))
        if not rows:
            raise StoreError(f"no baseline named {name!r} (fracregress bless RUN)")
        return rows[0][0]

    def run(self, run_id):
        rows = self.query(
            "SELECT r.id, r.commit_id, r.dirty, r.date, r.device, r.params, r.source, r.label, "
            "m.info FROM runs r LEFT JOIN machines m ON m.id = r.machine_id WHERE r.id = ?",
            (run_id,))
        if not rows:
            raise StoreError(f"no run {run_id}")
        r = rows[0]
        return {"id": r[0], "commit": r[1], "dirty": bool(r[2]), "date": r[3],
                "device": json.loads(r[4] or "{}"), "params": json.loads(r[5] or "{}"),
                "source": r[6], "label": r[7], "machine": json.loads(r[8] or "{}")}

    def runs(self):
        return [self.run(r[0]) for r in self.query("SELECT id FROM runs ORDER BY date, id")]

    def resolve(self, ref):
        """A run id, 'latest', 'baseline' / 'baseline:NAME', or a commit prefix (latest run)."""
        if ref == "latest":
            rows = self.query("SELECT id FROM runs ORDER BY date DESC, id DESC LIMIT 1")
        elif ref == "baseline" or ref.startswith("baseline:"):
            return self.baseline(ref.partition(":")[2] or "default")
        elif ref.isdigit():
            rows = self.query("SELECT id FROM runs WHERE id = ?", (int(ref),))
        else:
            rows = self.query("SELECT id FROM runs WHERE commit_id LIKE ? "
                              "ORDER BY date DESC, id DESC LIMIT 1", (ref + "%",))
        if not rows:
            raise StoreError(f"no run matches {ref!r}")
        return rows[0][0]

    def metrics(self, run_id):
        """{metric: {"unit", "better", "slices": [values in slice order]}}"""
        out = {}
        for name, unit, better, v in self.query(
                "SELECT s.metric, m.unit, m.better, s.value FROM samples s "
                "LEFT JOIN metrics m ON m.name = s.metric WHERE s.run_id = ? "
                "ORDER BY s.metric, s.slice", (run_id,)):
            out.setdefault(name, {"unit": unit, "better": better or "lower",
                                  "slices": []})["slices"].append(v)
        return out

    def stages(self, run_id):
        """{stage: {"count", "sum_ns", "buckets": [{"low", "high", "count"}]}}"""
        out = {}
        for stage, count, sum_ns in self.query(
                "SELECT stage, count, sum_ns FROM stage_stats WHERE run_id = ?", (run_id,)):
            out[stage] = {"count": count, "sum_ns": sum_ns, "buckets": []}
        for stage, low, high, count in self.query(
                "SELECT stage, bucket_low, bucket_high, count FROM stage_hists "
                "WHERE run_id = ? ORDER BY stage, bucket_low", (run_id,)):
            out.setdefault(stage, {"count": 0, "sum_ns": None, "buckets": []})
            out[stage]["buckets"].append({"low": low, "high": high, "count": count})
        return out

    def history(self, metric, machine=None, experiments=False):
        """[(run_id, date, commit, [slices])] of one metric, oldest first. Runs of
        tools/regress/regress's experiments (param mode "inject": a device slowed on purpose, or
        "aa": a second identical device) are left out unless `experiments`: they measure
        the device model, not a commit, and an injected slowdown would read as a change
        point of the code."""
        q = ("SELECT r.id, r.date, r.commit_id, r.params, s.value FROM samples s JOIN runs r "
             "ON r.id = s.run_id WHERE s.metric = ?")
        args = [metric]
        if machine is not None:
            q += " AND r.machine_id = ?"
            args.append(machine)
        q += " ORDER BY r.date, r.id, s.slice"
        out, skip = [], {}
        for rid, date, commit, params, v in self.query(q, args):
            if rid not in skip:
                mode = json.loads(params or "{}").get("mode")
                skip[rid] = not experiments and mode in EXPERIMENT_MODES
            if skip[rid]:
                continue
            if not out or out[-1][0] != rid:
                out.append((rid, date, commit, []))
            out[-1][3].append(v)
        return out

    def metric_names(self):
        return [r[0] for r in self.query("SELECT DISTINCT metric FROM samples ORDER BY metric")]
