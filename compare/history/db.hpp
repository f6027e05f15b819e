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
  // Opens (creating when `create`) with a busy timeout of `busy_ms`; the library missing is an
  // Error whose message says so.
  static Expected<Db> open(const std::string& path, bool create, int busy_ms);
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
  // Moves the WAL into the file and truncates it, so the file alone holds every row (a CI
  // cache that saves only FILE). Busy (another process still writing) is no error: the last
  // one to finish checkpoints.
  void checkpoint();
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] Error error(const std::string& what) const;

 private:
  Status exec_with(const std::string& sql, int (*callback)(void*, int, char**, char**), void* data);
  const sqlite::Api* api_ = nullptr;
  sqlite::Handle* h_ = nullptr;
  std::string path_;
  bool busy_ = false;
};

}  // namespace gpucheck::compare::history
