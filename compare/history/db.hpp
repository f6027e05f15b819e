// A connection to one SQLite file and its prepared statements, over the library loaded at run
// time (sqlite_api.hpp). Move-only handles; every failure is an Error naming the file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"
#include "history/sqlite_api.hpp"

namespace gpucheck::compare::history {

class Statement {
 public:
  Statement() = default;
  Statement(const sqlite::Api* api, sqlite::Handle* db, sqlite::Stmt* s, std::string where)
      : api_(api), db_(db), s_(s), where_(std::move(where)) {}
  Statement(Statement&& o) noexcept { *this = std::move(o); }
  Statement& operator=(Statement&& o) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  Statement& bind(int i, std::int64_t v);
  Statement& bind(int i, double v);
  Statement& bind(int i, std::string_view v);
  Statement& bind(int i, const std::optional<double>& v);
  Statement& bind_null(int i);
  // true: a row is there to read; false: done. Resets itself once done.
  Expected<bool> step();
  // Runs a statement that returns no rows (resets it for the next use).
  Status run();
  void reset();

  [[nodiscard]] bool is_null(int col) const;
  [[nodiscard]] std::int64_t integer(int col) const;
  [[nodiscard]] double real(int col) const;
  [[nodiscard]] std::optional<double> optional_real(int col) const;
  [[nodiscard]] std::string text(int col) const;

 private:
  const sqlite::Api* api_ = nullptr;
  sqlite::Handle* db_ = nullptr;
  sqlite::Stmt* s_ = nullptr;
  std::string where_;
};

class Db {
 public:
  // Opens with a busy timeout of `busy_ms`: ReadOnly never writes the file (SQLITE_OPEN_READONLY),
  // Immutable as well, and reads it as a file no process changes (SQLite's immutable=1: no lock,
  // no -shm, what a WAL database in a read-only folder needs), Create makes a missing one. The
  // library missing is an Error whose message says so.
  enum class Mode { ReadOnly, Immutable, ReadWrite, Create };
  static Expected<Db> open(const std::string& path, Mode mode, int busy_ms);
  Db() = default;
  Db(Db&& o) noexcept { *this = std::move(o); }
  Db& operator=(Db&& o) noexcept;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db();

  Status exec(const std::string& sql);
  Expected<Statement> prepare(const std::string& sql);
  // One integer from a query with one row (a PRAGMA's value).
  Expected<std::int64_t> integer(const std::string& sql);
  // The integer columns of a query's first row, read in one statement (one snapshot).
  Expected<std::vector<std::int64_t>> integers(const std::string& sql);
  // Whether the last exec() or integers() failed because another connection held a lock
  // (some of SQLite's lock waits, such as a file's first switch to WAL, do not wait for the
  // busy timeout: the caller retries).
  [[nodiscard]] bool busy() const { return busy_; }
  [[nodiscard]] std::int64_t last_id() const;
  [[nodiscard]] int changes() const;
  // Moves the WAL into the file without waiting for another connection (PASSIVE), so the file
  // alone holds every committed row (a CI cache that saves only FILE) unless another process
  // reads an older snapshot: then the last connection to close moves the rest (SQLite's
  // checkpoint on close). The file is grown to its new size first, so a full disk fails before
  // a page is copied and FILE alone stays whole; that failure, or the checkpoint's, is an Error
  // saying the rows are in FILE-wal, and the checkpoint on close is then turned off. A
  // read-only connection does nothing.
  Status checkpoint();
  // SQLite's extended result code of the last failure (0: none).
  [[nodiscard]] int error_code() const;
  [[nodiscard]] bool read_only() const { return read_only_; }
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] Error error(const std::string& what) const;

 private:
  Status exec_with(const std::string& sql, int (*callback)(void*, int, char**, char**), void* data);
  const sqlite::Api* api_ = nullptr;
  sqlite::Handle* h_ = nullptr;
  std::string path_;
  bool busy_ = false;
  bool read_only_ = false;
};

}  // namespace gpucheck::compare::history
