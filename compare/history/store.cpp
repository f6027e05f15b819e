#include "history/store.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>
#include <tuple>
#include <utility>

#include "base/format.hpp"
#include "gpucheck/core/stats.hpp"
#include "results/baseline.hpp"
#include "rules/compare.hpp"

namespace gpucheck::compare::history {
namespace {

// Migration i takes a file from schema i to i + 1; all pending ones run in one transaction.
const char* const kMigrations[] = {
    R"(CREATE TABLE runs(id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, commit_sha TEXT NOT NULL,
         branch TEXT NOT NULL, date TEXT NOT NULL, added TEXT NOT NULL, suite TEXT NOT NULL, source TEXT NOT NULL,
         gpu_name TEXT NOT NULL, gpu_slug TEXT NOT NULL, gpu_uuid TEXT NOT NULL, driver TEXT NOT NULL,
         host_cpu TEXT NOT NULL, host_name TEXT NOT NULL);
       CREATE INDEX runs_gpu_branch ON runs(gpu_slug, branch);
       CREATE INDEX runs_commit ON runs(commit_sha);
       CREATE TABLE context(run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, key TEXT NOT NULL,
         value TEXT NOT NULL, PRIMARY KEY(run, key)) WITHOUT ROWID;
       CREATE TABLE cases(id INTEGER PRIMARY KEY, run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
         name TEXT NOT NULL, metric TEXT NOT NULL, unit TEXT NOT NULL, direction TEXT NOT NULL, method TEXT NOT NULL,
         state TEXT NOT NULL, median REAL, cv REAL, verdict TEXT NOT NULL, UNIQUE(run, name, metric));
       CREATE TABLE samples(case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE, rep INTEGER NOT NULL,
         value REAL NOT NULL, PRIMARY KEY(case_id, rep)) WITHOUT ROWID;)",
};
static_assert(std::size(kMigrations) == kSchemaVersion);

// Rolls back unless committed: a failure (or a kill) between BEGIN and COMMIT leaves nothing.
class Transaction {
 public:
  explicit Transaction(Db& db) : db_(db) {}
  Status begin() {
    auto s = db_.exec("BEGIN IMMEDIATE");
    open_ = s.ok();
    return s;
  }
  Status commit() {
    open_ = false;
    return db_.exec("COMMIT");
  }
  ~Transaction() {
    if (open_) (void)db_.exec("ROLLBACK");
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

 private:
  Db& db_;
  bool open_ = false;
};

void bind_optional(Statement& s, int i, const std::optional<std::string>& v) {
  if (v) s.bind(i, std::string_view(*v));
  else s.bind_null(i);
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S+00:00", &tm);
  return buf;
}

// The earliest of a merged context's dates ("a | b | c"); ISO 8601 in one zone sorts as text.
std::string first_date(const std::string& merged) {
  std::string best;
  for (std::size_t start = 0;;) {
    const std::size_t bar = merged.find(" | ", start);
    const std::string d = merged.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
    if (!d.empty() && (best.empty() || d < best)) best = d;
    if (bar == std::string::npos) break;
    start = bar + 3;
  }
  return best.empty() ? "unknown" : best;
}

const char* state_name(RunState s) {
  switch (s) {
    case RunState::Ok: return "ok";
    case RunState::Skipped: return "skipped";
    case RunState::Errored: return "errored";
  }
  return "errored";
}

std::vector<StoredCase> cases_of(const Benchmark& b, const std::map<std::string, std::string>& verdicts,
                                 const std::string& verdict_metric) {
  std::vector<StoredCase> out;
  const bool ok = b.state == RunState::Ok;
  const auto verdict_of = [&](const std::string& metric) {
    const auto v = verdicts.find(b.name);
    return v != verdicts.end() && metric == verdict_metric ? v->second : std::string();
  };
  StoredCase t{b.name, "real_time", "ns", "lower", b.method, state_name(b.state), std::nullopt, std::nullopt, verdict_of("real_time"), {}};
  if (ok) {
    t.median = b.real_time_ns;
    t.cv = b.cv;
    t.samples = b.samples_ns.empty() ? std::vector<double>{b.real_time_ns} : b.samples_ns;
  }
  out.push_back(std::move(t));
  const std::string rate = rate_counter(b);
  const auto value = b.counters.find(rate);
  if (!ok || rate.empty() || value == b.counters.end()) return out;
  const auto dir = direction_for(rate).value_or(Direction::HigherIsBetter);
  StoredCase c{b.name, rate, rate, dir == Direction::HigherIsBetter ? "higher" : "lower", b.method, "ok", value->second,
               std::nullopt, verdict_of(rate), {}};
  if (const auto s = b.counter_samples.find(rate); s != b.counter_samples.end() && !s->second.empty())
    c.samples = s->second;
  else c.samples = {value->second};
  if (const auto cv = b.counter_cv.find(rate); cv != b.counter_cv.end()) c.cv = cv->second;
  else c.cv = gpucheck::coefficient_of_variation(c.samples);
  out.push_back(std::move(c));
  return out;
}

struct Fnv {
  std::uint64_t a = 14695981039346656037ULL, b = 1099511628211ULL * 31 + 7;
  void add(std::string_view s) {
    for (const unsigned char ch : s) {
      a = (a ^ ch) * 1099511628211ULL;
      b = (b ^ ch) * 1099511628211ULL + 0x9e3779b97f4a7c15ULL;
    }
    a = (a ^ 0xffU) * 1099511628211ULL;  // a field separator no text holds
    b = (b ^ 0xffU) * 1099511628211ULL;
  }
  void add(double v) { add(format_double("%.17g", v)); }
};

bool is_sqlite_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[16] = {};
  in.read(head, sizeof head);
  return in.gcount() == 16 && std::string_view(head, 16) == std::string_view("SQLite format 3\0", 16);
}

// What SQLite keeps beside FILE while it writes: part of the history, and only ever files.
constexpr std::pair<const char*, const char*> kSidecars[] = {
    {"-wal", "write-ahead log"}, {"-shm", "shared memory index"}, {"-journal", "rollback journal"}};

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// 0 when this user may make files in FILE's folder (where SQLite puts FILE-wal and FILE-shm),
// else the errno that says why not.
int folder_unwritable(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return ::access(dir.empty() ? "." : dir.c_str(), W_OK) == 0 ? 0 : errno;
}

// Writing needs FILE writable and, unless its -wal and -shm are there already, its folder too.
Status check_writable(const std::string& path, bool present) {
  if (present && ::access(path.c_str(), W_OK) != 0)
    return Error{path, "is read-only for this user (" + std::string(std::strerror(errno)) +
                           "): only list, changes and report can read it"};
  if (present && exists(path + "-wal") && exists(path + "-shm")) return Done{};
  if (const int e = folder_unwritable(path); e != 0)
    return Error{path, "cannot create " + path + (present ? "-wal" : "") + ": its folder is not writable (" +
                           std::string(std::strerror(e)) + ")"};
  return Done{};
}

// The first checks, before SQLite opens anything: what is there is a regular file that is an
// SQLite database (for Create, an empty file becomes a new history), its sidecars are files,
// and a command that writes may write it.
Status check_path(const std::string& path, Store::Access access) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    if (e == ELOOP) return Error{path, "a symbolic link loop (" + std::string(std::strerror(e)) + ")"};
    if (e != ENOENT) return Error{path, "cannot read (" + std::string(std::strerror(e)) + ")"};
    if (access != Store::Access::Create) return Error{path, "no such history file"};
    return check_writable(path, false);
  }
  if (!S_ISREG(st.st_mode)) return Error{path, "not a regular file (a history is one SQLite file)"};
  for (const auto& [suffix, what] : kSidecars) {
    struct stat side {};
    if (::stat((path + suffix).c_str(), &side) == 0 && !S_ISREG(side.st_mode))
      return Error{path + suffix, std::string("is not a regular file (SQLite keeps the history's ") + what +
                                      " there); left as it was"};
  }
  if (::access(path.c_str(), R_OK) != 0) return Error{path, "cannot read (" + std::string(std::strerror(errno)) + ")"};
  if (st.st_size > 0 && !is_sqlite_file(path)) return Error{path, "not a gpucheck history (not an SQLite database); left as it was"};
  if (st.st_size == 0 && access != Store::Access::Create)
    return Error{path, "is empty: not a gpucheck history yet (history add makes one); left as it was"};
  if (access == Store::Access::Read) return Done{};
  return check_writable(path, true);
}

// A folder this user cannot write holding FILE without FILE-wal and FILE-shm.
bool read_only_folder(const std::string& path) {
  return folder_unwritable(path) != 0 && !exists(path + "-wal") && !exists(path + "-shm");
}

// A failure of SQLite on a file that passed check_path, with its cause: only SQLite's "not a
// database" makes it "not a gpucheck history".
Error sqlite_failure(const Db& db, const Error& e) {
  const int code = db.error_code() & 0xff;
  if (code == sqlite::kNotADb) return Error{db.path(), "not a gpucheck history (" + e.message + "); left as it was"};
  std::string cause;
  if (code == sqlite::kReadOnly) cause = ": the file or its folder is read-only here";
  else if (code == sqlite::kFull) cause = ": the disk is full";
  else if (code == sqlite::kCantOpen) cause = ": cannot open it, or create " + db.path() + "-wal or -shm beside it";
  else if (code == sqlite::kIoErr) cause = ": an I/O error";
  else if (code == sqlite::kCorrupt) cause = ": the SQLite file is damaged";
  return Error{db.path(), "cannot use the history (" + e.message + ")" + cause};
}

}  // namespace

std::vector<std::string> history_files(const std::string& path) {
  std::vector<std::string> out{path};
  for (const auto& side : kSidecars) out.push_back(path + side.first);
  return out;
}

StoredRun run_from_results(const Results& r, const AddOptions& o, const std::map<std::string, std::string>& verdicts,
                           const std::string& verdict_metric) {
  StoredRun run;
  RunInfo& i = run.info;
  i.commit = o.commit.value_or(r.context_value("gpucheck_commit"));
  i.branch = o.branch.value_or(r.context_value("git_branch"));
  i.date = first_date(r.context_value("date"));
  i.added = now_utc();
  i.suite = r.context_value("gpucheck_suite");
  i.source = r.source;
  i.gpu_name = r.context_value("gpu_name");
  i.gpu_slug = gpu_slug(i.gpu_name);
  i.gpu_uuid = r.context_value("gpu_uuid");
  i.driver = r.context_value("driver_version");
  i.host_cpu = r.context_value("host_cpu");
  i.host_name = r.context_value("host_name");
  run.context = r.context;
  std::set<std::string> names;
  for (const Benchmark& b : r.benchmarks) {
    names.insert(b.name);
    for (auto& c : cases_of(b, verdicts, verdict_metric)) run.cases.push_back(std::move(c));
  }
  i.cases = names.size();
  i.hash = content_hash(run);
  return run;
}

std::string content_hash(const StoredRun& run) {
  Fnv h;
  for (const auto& [k, v] : run.context) {
    h.add(k);
    h.add(v);
  }
  for (const StoredCase& c : run.cases) {
    for (const std::string* s : {&c.name, &c.metric, &c.state, &c.method}) h.add(*s);
    h.add(c.median.value_or(-1.0));
    for (const double v : c.samples) h.add(v);
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.a),
                static_cast<unsigned long long>(h.b));
  return buf;
}

Expected<Store> Store::open(const std::string& path, Access access, int busy_ms) {
  if (auto c = check_path(path, access); !c) return c.error();
  // A lock wait SQLite does not hand to the busy timeout (another process switching a new file
  // to WAL, or migrating it) is retried here, up to the same timeout.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_ms);
  for (;;) {
    bool busy = false;
    auto s = open_once(path, access, busy_ms, &busy);
    if (s || !busy || std::chrono::steady_clock::now() >= deadline) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Expected<Store> Store::open_once(const std::string& path, Access access, int busy_ms, bool* busy) {
  const Db::Mode mode = access == Access::Read ? Db::Mode::ReadOnly
                        : access == Access::Create ? Db::Mode::Create
                                                   : Db::Mode::ReadWrite;
  auto db = Db::open(path, mode, busy_ms);
  if (!db) return db.error();
  const std::string foreign = "not a gpucheck history (";
  // One statement, one snapshot: another process's migration is seen whole or not at all.
  const std::string head_sql = "SELECT (SELECT application_id FROM pragma_application_id), "
                               "(SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_master)";
  auto head = db->integers(head_sql);
  if (!head && access == Access::Read && read_only_folder(path)) {
    // A WAL history in a folder this user cannot write, with no -shm to share: SQLite reads it
    // only as immutable. Without a -wal there is nothing outside the file to miss, and a process
    // that could change it would have left one while it writes.
    auto fixed = Db::open(path, Db::Mode::Immutable, busy_ms);
    if (!fixed) return fixed.error();
    if (auto again = fixed->integers(head_sql)) {
      db = std::move(fixed);
      head = std::move(again);
    }
  }
  if (!head) {
    *busy = db->busy();
    if (*busy) return head.error();
    return sqlite_failure(*db, head.error());
  }
  if (head->size() != 3) return Error{path, "cannot read the file's header"};
  const std::int64_t app = (*head)[0], ver = (*head)[1], tables = (*head)[2];
  if (app != kApplicationId && (tables > 0 || ver != 0))
    return Error{path, foreign + "an SQLite database of another application); left as it was"};
  if (app == kApplicationId && ver > kSchemaVersion)
    return Error{path, "written by a newer gpucheck (history schema " + std::to_string(ver) + "; this one reads up to " +
                           std::to_string(kSchemaVersion) + "); left as it was"};
  const bool current = app == kApplicationId && ver == kSchemaVersion;
  if (!current && access != Access::Create)  // only add, merge and the gate make or migrate a history
    return Error{path, app != kApplicationId ? "holds no gpucheck history (an empty SQLite database); left as it was"
                                             : "an older history schema (" + std::to_string(ver) +
                                                   "): history add migrates it; left as it was"};
  Store s(std::move(*db));
  if (access == Access::Read) return s;
  // No checkpoint after a commit (wal_autocheckpoint=0): only Db::checkpoint copies pages into
  // the file, after growing it, so a full disk cannot leave FILE half copied.
  if (auto w = s.db_.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; "
                          "PRAGMA wal_autocheckpoint=0");
      !w) {
    *busy = s.db_.busy();
    return *busy ? w.error() : sqlite_failure(s.db_, w.error());
  }
  if (!current) {
    if (auto m = s.migrate(); !m) {
      *busy = s.db_.busy();
      return m.error();
    }
  }
  return s;
}

Status Store::migrate() {
  Transaction t(db_);
  if (auto b = t.begin(); !b) return b;
  auto ver = db_.integer("PRAGMA user_version");  // again, inside the lock: another process may have done it
  if (!ver) return ver.error();
  for (auto v = *ver; v < kSchemaVersion; ++v)
    if (auto m = db_.exec(kMigrations[v]); !m) return Error{path(), "migrating to schema " + std::to_string(v + 1) + ": " + m.error().message};
  if (auto p = db_.exec("PRAGMA application_id=" + std::to_string(kApplicationId) +
                        "; PRAGMA user_version=" + std::to_string(kSchemaVersion));
      !p)
    return p;
  return t.commit();
}

Expected<std::vector<Store::Added>> Store::add(std::vector<StoredRun> runs) {
  Transaction t(db_);
  if (auto b = t.begin(); !b) return b.error();
  auto seen = db_.prepare("SELECT id FROM runs WHERE hash=?1");
  auto ins = db_.prepare(
      "INSERT INTO runs(hash, commit_sha, branch, date, added, suite, source, gpu_name, gpu_slug, gpu_uuid, driver, "
      "host_cpu, host_name) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)");
  auto ctx = db_.prepare("INSERT INTO context(run, key, value) VALUES(?1,?2,?3)");
  auto cs = db_.prepare(
      "INSERT INTO cases(run, name, metric, unit, direction, method, state, median, cv, verdict) "
      "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)");
  auto smp = db_.prepare("INSERT INTO samples(case_id, rep, value) VALUES(?1,?2,?3)");
  for (auto* s : {&seen, &ins, &ctx, &cs, &smp})
    if (!*s) return s->error();
  std::vector<Added> out;
  for (StoredRun& run : runs) {
    if (run.info.hash.empty()) run.info.hash = content_hash(run);
    auto there = seen->bind(1, std::string_view(run.info.hash)).step();
    if (!there) return there.error();
    if (*there) {
      out.push_back({seen->integer(0), false});
      seen->reset();
      continue;
    }
    const RunInfo& i = run.info;
    int col = 1;
    for (const std::string* s : {&i.hash, &i.commit, &i.branch, &i.date, &i.added, &i.suite, &i.source, &i.gpu_name,
                                 &i.gpu_slug, &i.gpu_uuid, &i.driver, &i.host_cpu, &i.host_name})
      ins->bind(col++, std::string_view(*s));
    if (auto r = ins->run(); !r) return r.error();
    const std::int64_t id = db_.last_id();
    for (const auto& [k, v] : run.context)
      if (auto r = ctx->bind(1, id).bind(2, std::string_view(k)).bind(3, std::string_view(v)).run(); !r) return r.error();
    for (const StoredCase& c : run.cases) {
      cs->bind(1, id).bind(2, std::string_view(c.name)).bind(3, std::string_view(c.metric)).bind(4, std::string_view(c.unit));
      cs->bind(5, std::string_view(c.direction)).bind(6, std::string_view(c.method)).bind(7, std::string_view(c.state));
      cs->bind(8, c.median).bind(9, c.cv).bind(10, std::string_view(c.verdict));
      if (auto r = cs->run(); !r) return Error{path(), "case " + c.name + " (" + c.metric + "): " + r.error().message};
      const std::int64_t cid = db_.last_id();
      for (std::size_t k = 0; k < c.samples.size(); ++k)
        if (auto r = smp->bind(1, cid).bind(2, static_cast<std::int64_t>(k)).bind(3, c.samples[k]).run(); !r)
          return r.error();
    }
    out.push_back({id, true});
  }
  if (auto c = t.commit(); !c) return c.error();
  return out;
}

namespace {
const char* const kRunColumns =
    "id, hash, commit_sha, branch, date, added, suite, source, gpu_name, gpu_slug, gpu_uuid, driver, host_cpu, host_name, "
    "(SELECT count(DISTINCT name) FROM cases WHERE run=runs.id)";

RunInfo run_info(const Statement& s) {
  RunInfo i;
  i.id = s.integer(0);
  std::string* fields[] = {&i.hash,   &i.commit,   &i.branch,   &i.date,   &i.added,    &i.suite,
                           &i.source, &i.gpu_name, &i.gpu_slug, &i.gpu_uuid, &i.driver, &i.host_cpu, &i.host_name};
  int col = 1;
  for (std::string* f : fields) *f = s.text(col++);
  i.cases = static_cast<std::size_t>(s.integer(col));
  return i;
}
}  // namespace

Expected<std::vector<RunInfo>> Store::runs(const Filter& f) {
  auto s = db_.prepare(std::string("SELECT ") + kRunColumns +
                       " FROM runs WHERE (?1 IS NULL OR gpu_slug=?1) AND (?2 IS NULL OR branch=?2) ORDER BY date DESC, id DESC");
  if (!s) return s.error();
  bind_optional(*s, 1, f.gpu_slug);
  bind_optional(*s, 2, f.branch);
  std::vector<RunInfo> out;
  for (;;) {
    auto row = s->step();
    if (!row) return row.error();
    if (!*row) break;
    out.push_back(run_info(*s));
  }
  return out;
}

Expected<StoredRun> Store::read_run(std::int64_t id) {
  StoredRun run;
  auto s = db_.prepare(std::string("SELECT ") + kRunColumns + " FROM runs WHERE id=?1");
  if (!s) return s.error();
  auto row = s->bind(1, id).step();
  if (!row) return row.error();
  if (!*row) return Error{path(), "no run " + std::to_string(id)};
  run.info = run_info(*s);
  s->reset();
  auto c = db_.prepare("SELECT key, value FROM context WHERE run=?1");
  if (!c) return c.error();
  c->bind(1, id);
  for (auto r = c->step(); r && *r; r = c->step()) run.context[c->text(0)] = c->text(1);
  std::map<std::int64_t, std::vector<double>> samples;  // case id -> its repetitions
  auto v = db_.prepare("SELECT case_id, value FROM samples WHERE case_id IN (SELECT id FROM cases WHERE run=?1) "
                       "ORDER BY case_id, rep");
  if (!v) return v.error();
  v->bind(1, id);
  for (auto r = v->step(); r && *r; r = v->step()) samples[v->integer(0)].push_back(v->real(1));
  auto k = db_.prepare(
      "SELECT c.name, c.metric, c.unit, c.direction, c.method, c.state, c.median, c.cv, c.verdict, c.id "
      "FROM cases c WHERE c.run=?1 ORDER BY c.id");
  if (!k) return k.error();
  k->bind(1, id);
  for (;;) {
    auto r = k->step();
    if (!r) return r.error();
    if (!*r) break;
    StoredCase sc{k->text(0), k->text(1), k->text(2), k->text(3), k->text(4), k->text(5),
                  k->optional_real(6), k->optional_real(7), k->text(8), std::move(samples[k->integer(9)])};
    run.cases.push_back(std::move(sc));
  }
  return run;
}

Expected<std::size_t> Store::remove_run(std::int64_t id) {
  auto s = db_.prepare("DELETE FROM runs WHERE id=?1");
  if (!s) return s.error();
  if (auto r = s->bind(1, id).run(); !r) return r.error();
  return static_cast<std::size_t>(db_.changes());
}

Expected<std::string> Store::resolve_commit(const std::string& prefix) {
  if (prefix.empty()) return Error{"--commit", "needs a commit (a SHA or a unique prefix of one)"};
  auto s = db_.prepare("SELECT DISTINCT commit_sha FROM runs WHERE substr(commit_sha, 1, ?2)=?1 ORDER BY commit_sha");
  if (!s) return s.error();
  s->bind(1, std::string_view(prefix)).bind(2, static_cast<std::int64_t>(prefix.size()));
  std::vector<std::string> found;
  for (auto r = s->step(); r && *r; r = s->step()) found.push_back(s->text(0));
  if (std::find(found.begin(), found.end(), prefix) != found.end()) return prefix;
  if (found.empty()) return Error{path(), "no stored commit starts with \"" + prefix + "\""};
  if (found.size() > 1) {
    std::string list;
    for (std::size_t i = 0; i < found.size() && i < 5; ++i) list += (i ? ", " : "") + found[i];
    return Error{path(), "\"" + prefix + "\" names " + std::to_string(found.size()) + " commits (" + list +
                             "): give more of the SHA"};
  }
  return found.front();
}

Expected<std::size_t> Store::remove_commit(const std::string& prefix) {
  auto c = resolve_commit(prefix);
  if (!c) return c.error();
  auto s = db_.prepare("DELETE FROM runs WHERE commit_sha=?1");
  if (!s) return s.error();
  if (auto r = s->bind(1, std::string_view(*c)).run(); !r) return r.error();
  return static_cast<std::size_t>(db_.changes());
}

Expected<std::vector<std::string>> Store::gpu_slugs() {
  return texts("SELECT DISTINCT gpu_slug FROM runs ORDER BY gpu_slug", std::nullopt);
}

Expected<std::vector<std::string>> Store::texts(const std::string& sql, const std::optional<std::string>& gpu) {
  auto s = db_.prepare(sql);
  if (!s) return s.error();
  if (gpu) s->bind(1, std::string_view(*gpu));
  std::vector<std::string> out;
  for (;;) {
    auto r = s->step();
    if (!r) return r.error();
    if (!*r) break;
    out.push_back(s->text(0));
  }
  return out;
}

Expected<std::vector<std::string>> Store::metrics(const std::string& gpu) {
  return texts("SELECT DISTINCT c.metric FROM cases c JOIN runs r ON r.id=c.run WHERE r.gpu_slug=?1 ORDER BY c.metric", gpu);
}

Expected<std::vector<std::string>> Store::branches(const std::string& gpu) {
  return texts("SELECT DISTINCT branch FROM runs WHERE gpu_slug=?1 ORDER BY branch", gpu);
}

Expected<std::string> Store::pick_gpu(const std::optional<std::string>& given) {
  auto slugs = gpu_slugs();
  if (!slugs) return slugs.error();
  std::string list;
  for (const auto& g : *slugs) list += (list.empty() ? "" : ", ") + g;
  if (given) {
    if (std::find(slugs->begin(), slugs->end(), *given) != slugs->end()) return *given;
    return Error{"--gpu", "no runs of \"" + *given + "\" in " + path() + " (GPU models there: " +
                              (list.empty() ? std::string("none") : list) + ")"};
  }
  if (slugs->empty()) return Error{path(), "holds no runs"};
  if (slugs->size() > 1) return Error{path(), "holds runs of several GPU models (" + list + "): pick one with --gpu SLUG"};
  return slugs->front();
}

Expected<std::vector<Point>> Store::points(const Filter& f, const std::string& metric) {
  std::map<std::string, std::string> first;  // commit -> date of its first run
  auto fc = db_.prepare("SELECT commit_sha, min(date) FROM runs GROUP BY commit_sha");
  if (!fc) return fc.error();
  for (auto r = fc->step(); r && *r; r = fc->step()) first[fc->text(0)] = fc->text(1);
  auto s = db_.prepare(
      "SELECT r.id, r.commit_sha, r.branch, r.date, r.host_cpu, r.gpu_uuid, r.host_name, c.name, c.metric, c.unit, "
      "c.direction, c.method, c.median, c.cv, (SELECT CASE WHEN c.direction='higher' THEN max(value) ELSE min(value) END "
      "FROM samples WHERE case_id=c.id) FROM cases c JOIN runs r ON r.id=c.run WHERE c.metric=?1 AND "
      "c.state='ok' AND c.median IS NOT NULL AND (?2 IS NULL OR r.gpu_slug=?2) AND (?3 IS NULL OR r.branch=?3)");
  if (!s) return s.error();
  s->bind(1, std::string_view(metric));
  bind_optional(*s, 2, f.gpu_slug);
  bind_optional(*s, 3, f.branch);
  std::vector<Point> out;
  for (;;) {
    auto row = s->step();
    if (!row) return row.error();
    if (!*row) break;
    Point p;
    p.run = s->integer(0);
    std::string* fields[] = {&p.commit, &p.branch, &p.date, &p.host_cpu, &p.gpu_uuid, &p.host_name,
                             &p.name,   &p.metric, &p.unit, &p.direction, &p.method};
    int col = 1;
    for (std::string* fld : fields) *fld = s->text(col++);
    p.median = s->real(12);
    p.cv = s->optional_real(13);
    p.best = s->optional_real(14);
    out.push_back(std::move(p));
  }
  std::stable_sort(out.begin(), out.end(), [&first](const Point& a, const Point& b) {
    const std::string& fa = first[a.commit];
    const std::string& fb = first[b.commit];
    return std::tie(fa, a.commit, a.date, a.run) < std::tie(fb, b.commit, b.date, b.run);
  });
  return out;
}

Expected<std::map<std::string, std::vector<double>>> Store::commit_samples(const std::string& commit,
                                                                           const std::string& gpu,
                                                                           const std::string& metric,
                                                                           const std::optional<std::string>& host_cpu) {
  auto s = db_.prepare(
      "SELECT c.name, s.value FROM samples s JOIN cases c ON c.id=s.case_id JOIN runs r ON r.id=c.run WHERE "
      "r.commit_sha=?1 AND r.gpu_slug=?2 AND c.metric=?3 AND c.state='ok' AND (?4 IS NULL OR r.host_cpu=?4) "
      "ORDER BY r.id, s.rep");
  if (!s) return s.error();
  s->bind(1, std::string_view(commit)).bind(2, std::string_view(gpu)).bind(3, std::string_view(metric));
  bind_optional(*s, 4, host_cpu);
  std::map<std::string, std::vector<double>> out;
  for (;;) {
    auto row = s->step();
    if (!row) return row.error();
    if (!*row) break;
    out[s->text(0)].push_back(s->real(1));
  }
  return out;
}

}  // namespace gpucheck::compare::history
