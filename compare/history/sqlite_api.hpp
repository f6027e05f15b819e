// SQLite's C API, loaded with dlopen as NVML and PCRE2 are (watch/pcre2.hpp): the GPU machine
// has libsqlite3.so.0 but no sqlite3.h, so the few functions and constants the history uses
// are declared here, as in sqlite3.h (3.x; the C API is stable across the 3.x series). Never
// include <sqlite3.h>: one code path on every machine.
#pragma once

#include <cstdint>
#include <string>

namespace gpucheck::compare::history::sqlite {

struct Handle;  // sqlite3
struct Stmt;    // sqlite3_stmt
using Destructor = void (*)(void*);

constexpr int kOk = 0;           // SQLITE_OK
constexpr int kBusy = 5;         // SQLITE_BUSY
constexpr int kLocked = 6;       // SQLITE_LOCKED
constexpr int kReadOnly = 8;     // SQLITE_READONLY
constexpr int kIoErr = 10;       // SQLITE_IOERR
constexpr int kCorrupt = 11;     // SQLITE_CORRUPT
constexpr int kFull = 13;        // SQLITE_FULL
constexpr int kCantOpen = 14;    // SQLITE_CANTOPEN
constexpr int kNotADb = 26;      // SQLITE_NOTADB
constexpr int kRow = 100;        // SQLITE_ROW
constexpr int kDone = 101;       // SQLITE_DONE
constexpr int kNull = 5;         // SQLITE_NULL (a column's type)
constexpr int kOpenReadOnly = 0x00000001;   // SQLITE_OPEN_READONLY
constexpr int kOpenReadWrite = 0x00000002;  // SQLITE_OPEN_READWRITE
constexpr int kOpenCreate = 0x00000004;     // SQLITE_OPEN_CREATE
constexpr int kOpenUri = 0x00000040;        // SQLITE_OPEN_URI: "file:PATH?immutable=1"
constexpr int kOpenNoMutex = 0x00008000;    // SQLITE_OPEN_NOMUTEX: one connection per thread
constexpr int kCheckpointPassive = 0;       // SQLITE_CHECKPOINT_PASSIVE: never waits for another connection
constexpr int kFcntlSizeHint = 5;           // SQLITE_FCNTL_SIZE_HINT
constexpr int kFcntlChunkSize = 6;          // SQLITE_FCNTL_CHUNK_SIZE
constexpr int kDbConfigNoCkptOnClose = 1006;  // SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE
inline Destructor transient() { return reinterpret_cast<Destructor>(static_cast<std::intptr_t>(-1)); }  // SQLITE_TRANSIENT

// The library's entry points, bound once.
struct Api {
  int (*open_v2)(const char*, Handle**, int, const char*) = nullptr;
  int (*close_v2)(Handle*) = nullptr;
  const char* (*errmsg)(Handle*) = nullptr;
  int (*extended_errcode)(Handle*) = nullptr;
  int (*db_config)(Handle*, int, ...) = nullptr;
  int (*file_control)(Handle*, const char*, int, void*) = nullptr;
  int (*exec)(Handle*, const char*, int (*)(void*, int, char**, char**), void*, char**) = nullptr;
  void (*free)(void*) = nullptr;
  int (*busy_timeout)(Handle*, int) = nullptr;
  int (*prepare_v2)(Handle*, const char*, int, Stmt**, const char**) = nullptr;
  int (*step)(Stmt*) = nullptr;
  int (*reset)(Stmt*) = nullptr;
  int (*finalize)(Stmt*) = nullptr;
  int (*bind_int64)(Stmt*, int, std::int64_t) = nullptr;
  int (*bind_double)(Stmt*, int, double) = nullptr;
  int (*bind_text)(Stmt*, int, const char*, int, Destructor) = nullptr;
  int (*bind_null)(Stmt*, int) = nullptr;
  int (*column_type)(Stmt*, int) = nullptr;
  std::int64_t (*column_int64)(Stmt*, int) = nullptr;
  double (*column_double)(Stmt*, int) = nullptr;
  const unsigned char* (*column_text)(Stmt*, int) = nullptr;
  int (*changes)(Handle*) = nullptr;
  std::int64_t (*last_insert_rowid)(Handle*) = nullptr;
  int (*wal_checkpoint_v2)(Handle*, const char*, int, int*, int*) = nullptr;
  const char* (*libversion)() = nullptr;
};

// The loaded library, or nullptr with *err saying why.
const Api* load(std::string* err);

}  // namespace gpucheck::compare::history::sqlite
