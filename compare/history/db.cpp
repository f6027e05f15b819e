#include "history/db.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <utility>

#include "gpucheck/core/dl.hpp"

namespace gpucheck::compare::history {
namespace sqlite {
const Api* load(std::string* err) {
  static const Api api = [] {
    Api a;
    void* lib = dlopen("libsqlite3.so.0", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return a;
    const bool ok = dl_bind(lib, "sqlite3_open_v2", &a.open_v2) && dl_bind(lib, "sqlite3_close_v2", &a.close_v2) &&
                    dl_bind(lib, "sqlite3_errmsg", &a.errmsg) &&
                    dl_bind(lib, "sqlite3_extended_errcode", &a.extended_errcode) &&
                    dl_bind(lib, "sqlite3_db_config", &a.db_config) &&
                    dl_bind(lib, "sqlite3_file_control", &a.file_control) && dl_bind(lib, "sqlite3_exec", &a.exec) &&
                    dl_bind(lib, "sqlite3_free", &a.free) && dl_bind(lib, "sqlite3_busy_timeout", &a.busy_timeout) &&
                    dl_bind(lib, "sqlite3_prepare_v2", &a.prepare_v2) && dl_bind(lib, "sqlite3_step", &a.step) &&
                    dl_bind(lib, "sqlite3_reset", &a.reset) && dl_bind(lib, "sqlite3_finalize", &a.finalize) &&
                    dl_bind(lib, "sqlite3_bind_int64", &a.bind_int64) && dl_bind(lib, "sqlite3_bind_double", &a.bind_double) &&
                    dl_bind(lib, "sqlite3_bind_text", &a.bind_text) && dl_bind(lib, "sqlite3_bind_null", &a.bind_null) &&
                    dl_bind(lib, "sqlite3_column_type", &a.column_type) &&
                    dl_bind(lib, "sqlite3_column_int64", &a.column_int64) &&
                    dl_bind(lib, "sqlite3_column_double", &a.column_double) &&
                    dl_bind(lib, "sqlite3_column_text", &a.column_text) && dl_bind(lib, "sqlite3_changes", &a.changes) &&
                    dl_bind(lib, "sqlite3_last_insert_rowid", &a.last_insert_rowid) &&
                    dl_bind(lib, "sqlite3_wal_checkpoint_v2", &a.wal_checkpoint_v2) &&
                    dl_bind(lib, "sqlite3_libversion", &a.libversion);
    if (!ok) a.open_v2 = nullptr;
    return a;
  }();
  if (api.open_v2 == nullptr) {
    *err = "the history needs SQLite (libsqlite3.so.0), which cannot be loaded here (install libsqlite3-0)";
    return nullptr;
  }
  return &api;
}

}  // namespace sqlite

Statement& Statement::operator=(Statement&& o) noexcept {
  if (this != &o) {
    if (s_ != nullptr) api_->finalize(s_);
    api_ = std::exchange(o.api_, nullptr);
    db_ = std::exchange(o.db_, nullptr);
    s_ = std::exchange(o.s_, nullptr);
    where_ = std::move(o.where_);
  }
  return *this;
}

Statement::~Statement() {
  if (s_ != nullptr) api_->finalize(s_);
}

Statement& Statement::bind(int i, std::int64_t v) {
  api_->bind_int64(s_, i, v);
  return *this;
}
Statement& Statement::bind(int i, double v) {
  api_->bind_double(s_, i, v);
  return *this;
}
Statement& Statement::bind(int i, std::string_view v) {
  api_->bind_text(s_, i, v.data(), static_cast<int>(v.size()), sqlite::transient());
  return *this;
}
Statement& Statement::bind(int i, const std::optional<double>& v) {
  if (v) return bind(i, *v);
  return bind_null(i);
}
Statement& Statement::bind_null(int i) {
  api_->bind_null(s_, i);
  return *this;
}

Expected<bool> Statement::step() {
  const int rc = api_->step(s_);
  if (rc == sqlite::kRow) return true;
  api_->reset(s_);
  if (rc == sqlite::kDone) return false;
  std::string why = api_->errmsg(db_);
  if (rc == sqlite::kBusy || rc == sqlite::kLocked) why += " (another gpucheck held the history past the busy timeout)";
  return Error{where_, why};
}

Status Statement::run() {
  auto r = step();
  if (!r) return r.error();
  reset();
  return Done{};
}

void Statement::reset() { api_->reset(s_); }

bool Statement::is_null(int col) const { return api_->column_type(s_, col) == sqlite::kNull; }
std::int64_t Statement::integer(int col) const { return api_->column_int64(s_, col); }
double Statement::real(int col) const { return api_->column_double(s_, col); }
std::optional<double> Statement::optional_real(int col) const {
  if (is_null(col)) return std::nullopt;
  return real(col);
}
std::string Statement::text(int col) const {
  const unsigned char* t = api_->column_text(s_, col);
  return t == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(t));
}

Expected<Db> Db::open(const std::string& path, Mode mode, int busy_ms) {
  std::string err;
  const sqlite::Api* api = sqlite::load(&err);
  if (api == nullptr) return Error{path, err};
  Db db;
  db.api_ = api;
  db.path_ = path;
  db.read_only_ = mode == Mode::ReadOnly || mode == Mode::Immutable;
  const int access = mode == Mode::ReadOnly    ? sqlite::kOpenReadOnly
                     : mode == Mode::Immutable ? sqlite::kOpenReadOnly | sqlite::kOpenUri
                     : mode == Mode::Create    ? sqlite::kOpenReadWrite | sqlite::kOpenCreate
                                               : sqlite::kOpenReadWrite;
  std::string name = path;
  if (mode == Mode::Immutable) {  // a URI: the characters it reserves in a path escaped
    name = "file:";
    for (const char c : path) name += c == '%' ? "%25" : c == '?' ? "%3f" : c == '#' ? "%23" : std::string(1, c);
    name += "?immutable=1";
  }
  const int rc = api->open_v2(name.c_str(), &db.h_, access | sqlite::kOpenNoMutex, nullptr);
  if (rc != sqlite::kOk) return db.error("cannot open");
  api->busy_timeout(db.h_, busy_ms);
  return db;
}

Db& Db::operator=(Db&& o) noexcept {
  if (this != &o) {
    if (h_ != nullptr) api_->close_v2(h_);
    api_ = std::exchange(o.api_, nullptr);
    h_ = std::exchange(o.h_, nullptr);
    path_ = std::move(o.path_);
    busy_ = o.busy_;
    read_only_ = o.read_only_;
  }
  return *this;
}

Db::~Db() {
  if (h_ != nullptr) api_->close_v2(h_);
}

Error Db::error(const std::string& what) const {
  const std::string msg = h_ != nullptr ? api_->errmsg(h_) : "out of memory";
  return Error{path_, what + ": " + msg};
}

Status Db::exec(const std::string& sql) { return exec_with(sql, nullptr, nullptr); }

Expected<std::vector<std::int64_t>> Db::integers(const std::string& sql) {
  std::vector<std::int64_t> row;
  auto first_row = [](void* out, int n, char** values, char**) -> int {
    auto* r = static_cast<std::vector<std::int64_t>*>(out);
    if (!r->empty()) return 0;
    for (int i = 0; i < n; ++i) r->push_back(values[i] != nullptr ? std::strtoll(values[i], nullptr, 10) : 0);
    return 0;
  };
  if (auto e = exec_with(sql, first_row, &row); !e) return e.error();
  return row;
}

Status Db::exec_with(const std::string& sql, int (*callback)(void*, int, char**, char**), void* data) {
  char* msg = nullptr;
  const int rc = api_->exec(h_, sql.c_str(), callback, data, &msg);
  busy_ = rc == sqlite::kBusy || rc == sqlite::kLocked;
  if (rc == sqlite::kOk) return Done{};
  std::string why = msg != nullptr ? msg : api_->errmsg(h_);
  if (msg != nullptr) api_->free(msg);
  if (rc == sqlite::kBusy || rc == sqlite::kLocked) why += " (another gpucheck held the history past the busy timeout)";
  return Error{path_, why};
}

Expected<Statement> Db::prepare(const std::string& sql) {
  sqlite::Stmt* s = nullptr;
  if (api_->prepare_v2(h_, sql.c_str(), static_cast<int>(sql.size()), &s, nullptr) != sqlite::kOk)
    return error("cannot prepare a query");
  return Statement(api_, h_, s, path_);
}

Expected<std::int64_t> Db::integer(const std::string& sql) {
  auto s = prepare(sql);
  if (!s) return s.error();
  auto row = s->step();
  if (!row) return row.error();
  if (!*row) return Error{path_, "no value from \"" + sql + "\""};
  const std::int64_t v = s->integer(0);
  s->reset();
  return v;
}

std::int64_t Db::last_id() const { return api_->last_insert_rowid(h_); }
int Db::changes() const { return api_->changes(h_); }

int Db::error_code() const { return h_ != nullptr ? api_->extended_errcode(h_) : 0; }

Status Db::checkpoint() {
  if (h_ == nullptr || read_only_) return Done{};
  const auto kept = [this](const std::string& why) {
    int on = 1;  // a checkpoint on close would copy pages into a file that cannot take them
    api_->db_config(h_, sqlite::kDbConfigNoCkptOnClose, 1, &on);
    return Error{path_, why + ": the runs are committed in " + path_ + "-wal, which SQLite reads with " + path_ +
                            "; keep the two together (" + path_ + " alone lacks them) until a history command "
                            "with room to write moves them in"};
  };
  // Grown to its final size before any page is copied: a full disk then fails here, with the
  // file as it was, rather than halfway through the copy.
  auto size = integers("SELECT (SELECT page_count FROM pragma_page_count), (SELECT page_size FROM pragma_page_size)");
  if (!size || size->size() != 2) return kept("cannot read its size");
  int chunk = static_cast<int>((*size)[1]);
  std::int64_t bytes = (*size)[0] * (*size)[1];
  api_->file_control(h_, "main", sqlite::kFcntlChunkSize, &chunk);
  if (const int rc = api_->file_control(h_, "main", sqlite::kFcntlSizeHint, &bytes); rc != sqlite::kOk)
    return kept("cannot grow the file to " + std::to_string(bytes) + " bytes (the disk is full?)");
  int log = 0, copied = 0;
  const int rc = api_->wal_checkpoint_v2(h_, nullptr, sqlite::kCheckpointPassive, &log, &copied);
  if (rc == sqlite::kOk || rc == sqlite::kBusy || rc == sqlite::kLocked) return Done{};  // busy: another one is at it
  return kept(std::string("checkpoint failed (") + api_->errmsg(h_) + ")");
}

}  // namespace gpucheck::compare::history
