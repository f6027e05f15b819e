#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>
#include <sys/wait.h>

#include "gpucheck/core/input.hpp"
#include "test_util.hpp"
#include "gpucheck/core/json_load.hpp"
#include "gpucheck/core/output.hpp"

namespace gpucheck {
namespace {

namespace fs = std::filesystem;

TEST(Output, ClassifyIsThePathsKind) {
  using F = FileType;
  EXPECT_EQ(classify_output("-", {}), OutputKind::standard_output);
  EXPECT_EQ(classify_output("out.json", {F::missing, F::missing}), OutputKind::replace);
  EXPECT_EQ(classify_output("out.json", {F::regular, F::regular}), OutputKind::replace);
  EXPECT_EQ(classify_output("p", {F::fifo, F::fifo}), OutputKind::in_place);
  EXPECT_EQ(classify_output("c", {F::character_device, F::character_device}), OutputKind::in_place);
  EXPECT_EQ(classify_output("l", {F::symlink, F::fifo}), OutputKind::in_place);
  EXPECT_EQ(classify_output("l", {F::symlink, F::character_device}), OutputKind::in_place);
  EXPECT_EQ(classify_output("l", {F::symlink, F::regular}), OutputKind::replace);
  EXPECT_EQ(classify_output("l", {F::symlink, F::missing}), OutputKind::refuse);
  EXPECT_EQ(classify_output("d", {F::directory, F::directory}), OutputKind::refuse);
  EXPECT_EQ(classify_output("b", {F::block_device, F::block_device}), OutputKind::refuse);
  EXPECT_EQ(classify_output("s", {F::socket, F::socket}), OutputKind::refuse);
  EXPECT_EQ(classify_output("l", {F::symlink, F::directory}), OutputKind::refuse);
  EXPECT_EQ(refusal_reason({F::directory, F::directory}), "is a folder");
  EXPECT_EQ(refusal_reason({F::symlink, F::missing}), "a symbolic link to nothing");
  EXPECT_EQ(refusal_reason({F::symlink, F::missing, 0, true}), "a loop of symbolic links");
  EXPECT_EQ(refusal_reason({F::regular, F::regular}), "");
}

// A link loop is named as one (it was "a symbolic link to nothing").
TEST(Output, ALinkLoopIsNamedAsOne) {
  testutil::TempDir d("gpucheck-output");
  const std::string a = d / "a", b = d / "b";
  ASSERT_EQ(::symlink(b.c_str(), a.c_str()), 0);
  ASSERT_EQ(::symlink(a.c_str(), b.c_str()), 0);
  const PathFacts f = path_facts(a);
  EXPECT_TRUE(f.link_loop);
  EXPECT_EQ(classify_output(a, f), OutputKind::refuse);
  std::string err;
  EXPECT_FALSE(write_output(a, "x", &err));
  EXPECT_NE(err.find("a loop of symbolic links"), std::string::npos) << err;
}

TEST(Output, TempIsBesideTheFileAndHidden) {
  EXPECT_EQ(temp_path_for("a/b/out.json", 42), "a/b/.out.json.tmp-42");
  EXPECT_EQ(temp_path_for("out.json", 7), ".out.json.tmp-7");
  EXPECT_EQ(temp_path_for("/out.json", 7), "/.out.json.tmp-7");
}

using testutil::slurp;
using testutil::TempDir;

TEST(Output, ARegularFileIsReplacedAndNoTempRemains) {
  TempDir d("gpucheck-output");
  std::string err;
  ASSERT_TRUE(write_output(d / "r.json", "first", &err)) << err;
  EXPECT_EQ(slurp(d / "r.json"), "first");
  ASSERT_TRUE(write_output(d / "r.json", "second, longer", &err)) << err;
  EXPECT_EQ(slurp(d / "r.json"), "second, longer");
  EXPECT_EQ(fs::status(d / "r.json").type(), fs::file_type::regular);
  EXPECT_EQ(d.entries(), 1u);  // no .r.json.tmp-PID left
}

TEST(Output, ALinkToARegularFileReplacesItsTargetAndStaysALink) {
  TempDir d("gpucheck-output");
  std::string err;
  ASSERT_TRUE(write_output(d / "target.json", "old", &err));
  fs::create_symlink(d / "target.json", d / "link.json");
  ASSERT_TRUE(write_output(d / "link.json", "new", &err)) << err;
  EXPECT_TRUE(fs::is_symlink(d / "link.json"));
  EXPECT_EQ(slurp(d / "target.json"), "new");
  EXPECT_EQ(d.entries(), 2u);
}

TEST(Output, FailureLeavesNoTemp) {
  TempDir d("gpucheck-output");
  std::string err;
  EXPECT_FALSE(write_output(d / "no-such-folder/x.json", "x", &err));
  EXPECT_NE(err.find("no-such-folder/x.json"), std::string::npos);
  // The rename fails (a folder that is not empty holds the name): the temp goes.
  fs::create_directory(d / "busy");
  { std::ofstream(d / "busy/inside") << "x"; }
  AtomicReplace r(d / "busy");
  { std::ofstream(r.temp_path()) << "data"; }
  EXPECT_FALSE(r.commit(&err));
  EXPECT_FALSE(fs::exists(r.temp_path()));
  // Nobody wrote the temp: nothing to put in place.
  AtomicReplace never(d / "never.json");
  EXPECT_FALSE(never.commit(&err));
  EXPECT_FALSE(fs::exists(d / "never.json"));
  EXPECT_EQ(d.entries(), 1u);
}

// Several outputs of one command: a FIFO with no reader, a missing folder or a refused kind
// among them changes none of the files; all written when every one can be.
TEST(Output, SeveralOutputsAllOrNone) {
  TempDir d("gpucheck-output");
  std::string err;
  ASSERT_TRUE(write_output(d / "a.md", "old a", &err));
  ASSERT_EQ(::mkfifo((d / "p.fifo").c_str(), 0600), 0);
  fs::create_directory(d / "dir");
  const std::string a = d / "a.md", b = d / "b.html", fifo = d / "p.fifo", lost = d / "none/x", dir = d / "dir";
  for (const std::string& bad : {fifo, lost, dir}) {
    EXPECT_FALSE(write_outputs({{a, "new a"}, {b, "new b"}, {bad, "x"}}, &err)) << bad;
    EXPECT_NE(err.find(bad), std::string::npos) << err;
    EXPECT_EQ(slurp(a), "old a") << bad;
    EXPECT_FALSE(fs::exists(b)) << bad;
  }
  EXPECT_EQ(d.entries(), 3u);  // a.md, p.fifo, dir: no temp left
  ASSERT_TRUE(write_outputs({{a, "new a"}, {b, "new b"}}, &err)) << err;
  EXPECT_EQ(slurp(a), "new a");
  EXPECT_EQ(slurp(b), "new b");
  EXPECT_TRUE(write_outputs({}, &err));
  EXPECT_EQ(d.entries(), 4u);
}

TEST(Output, AnAbandonedReplacementRemovesItsTemp) {
  TempDir d("gpucheck-output");
  std::string temp;
  {
    AtomicReplace r(d / "out.json");
    temp = r.temp_path();
    std::ofstream(temp) << "partial";
    ASSERT_TRUE(fs::exists(temp));
  }  // never committed
  EXPECT_FALSE(fs::exists(temp));
  EXPECT_FALSE(fs::exists(d / "out.json"));
}

TEST(Output, AFolderIsRefused) {
  TempDir d("gpucheck-output");
  fs::create_directory(d / "dir");
  std::string err;
  EXPECT_FALSE(write_output(d / "dir", "x", &err));
  EXPECT_NE(err.find("is a folder"), std::string::npos);
  EXPECT_TRUE(fs::is_directory(d / "dir"));
}

TEST(Output, AFifoWithoutAReaderIsAnErrorNotAHang) {
  TempDir d("gpucheck-output");
  ASSERT_EQ(::mkfifo((d / "fifo").c_str(), 0600), 0);
  std::string err;
  EXPECT_FALSE(write_output(d / "fifo", "x", &err));
  EXPECT_NE(err.find("no reader"), std::string::npos) << err;
  EXPECT_EQ(fs::status(d / "fifo").type(), fs::file_type::fifo);  // never replaced
}

TEST(Output, AFifoAndALinkToOneAreWrittenInPlace) {
  TempDir d("gpucheck-output");
  ASSERT_EQ(::mkfifo((d / "fifo").c_str(), 0600), 0);
  fs::create_symlink(d / "fifo", d / "link");
  const std::string data(1 << 20, 'x');  // more than a pipe holds: the writer waits for the reader
  for (const char* name : {"fifo", "link"}) {
    std::string got;
    std::thread t([&] {
      got = slurp(d / "fifo");  // blocks until the writer opens
    });
    // The writer opens without blocking and fails without a reader: wait until one is there.
    std::string err;
    bool ok = false;
    for (int i = 0; i < 500 && !(ok = write_output(d / name, data, &err)); ++i) ::usleep(2000);
    t.join();
    EXPECT_TRUE(ok) << err;
    EXPECT_EQ(got.size(), data.size()) << name;
    EXPECT_EQ(fs::status(d / "fifo").type(), fs::file_type::fifo);
  }
  EXPECT_TRUE(fs::is_symlink(d / "link"));
  EXPECT_EQ(d.entries(), 2u);
}

TEST(Output, ACharacterDeviceIsWrittenInPlace) {
  TempDir d("gpucheck-output");
  // A null device of our own in the temp folder (major 1, minor 3), never one under /dev.
  if (::mknod((d / "null").c_str(), S_IFCHR | 0600, makedev(1, 3)) != 0) GTEST_SKIP() << "mknod needs root";
  fs::create_symlink(d / "null", d / "link");
  std::string err;
  EXPECT_TRUE(write_output(d / "null", "bytes", &err)) << err;
  EXPECT_TRUE(write_output(d / "link", "bytes", &err)) << err;
  EXPECT_EQ(fs::status(d / "null").type(), fs::file_type::character);
  EXPECT_TRUE(fs::is_symlink(d / "link"));
  EXPECT_EQ(d.entries(), 2u);
}

TEST(Output, PathFactsFollowLinks) {
  TempDir d("gpucheck-output");
  EXPECT_EQ(path_facts(d / "none").type, FileType::missing);
  fs::create_symlink(d / "none", d / "dangling");
  const PathFacts f = path_facts(d / "dangling");
  EXPECT_EQ(f.type, FileType::symlink);
  EXPECT_EQ(f.target, FileType::missing);
  std::string err;
  EXPECT_FALSE(write_output(d / "dangling", "x", &err));
  EXPECT_FALSE(fs::exists(d / "none"));
}

// Issue 18, item 7: a writer stopped by SIGTERM (default disposition) leaves no temp: the
// handler removes the temps in flight, then the signal ends the process as before.
TEST(Output, SigtermRemovesTheTempInFlight) {
  TempDir d("gpucheck-output");
  const std::string out = d / "r.json";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    AtomicReplace r(out);
    std::ofstream(r.temp_path()) << "half a file";
    ::raise(SIGTERM);
    ::_exit(0);  // not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  EXPECT_EQ(d.entries(), 0u);
}

TEST(Output, StaleTempsOfDeadWritersAreRemovedOthersKept) {
  TempDir d("gpucheck-output");
  std::ofstream(d / ".r.json.tmp-2147483000") << "dead";
  std::ofstream(d / (".r.json.tmp-" + std::to_string(::getppid()))) << "alive";
  std::ofstream(d / ".s.json.tmp-2147483000") << "another file's";
  const auto removed = remove_stale_temps(d / "r.json");
  EXPECT_EQ(removed, std::vector<std::string>{".r.json.tmp-2147483000"});
  EXPECT_EQ(d.entries(), 2u);
  long pid = 0;
  EXPECT_TRUE(is_temp_name(".x.json.tmp-12", &pid));
  EXPECT_EQ(pid, 12);
  EXPECT_FALSE(is_temp_name("x.json.tmp-12"));
}

// The file standard output is open on is that stream: written to fd 1, never replaced.
TEST(Output, ThePathStandardOutputIsOpenOnIsStandardOutput) {
  TempDir d("gpucheck-output");
  const std::string f = d / "f";
  std::ofstream(f) << "";
  std::fflush(stdout);  // what the runner printed before (--gtest_brief prints no banner that flushes it)
  const int saved = ::dup(STDOUT_FILENO);
  const int fd = ::open(f.c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0);
  ::dup2(fd, STDOUT_FILENO);
  ::close(fd);
  const PathFacts facts = path_facts(f);
  std::string err;
  const bool ok = write_output(f, "exactly this", &err);
  std::fflush(stdout);
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  EXPECT_EQ(facts.std_stream, 1);
  EXPECT_EQ(classify_output(f, facts), OutputKind::standard_output);
  EXPECT_TRUE(ok) << err;
  EXPECT_EQ(slurp(f), "exactly this");
  EXPECT_EQ(d.entries(), 1u);
}

// Issue 18, item 4: GITHUB_STEP_SUMMARY as a FIFO nobody reads is skipped, not waited on.
TEST(Output, AppendToAFifoWithoutAReaderIsSkipped) {
  TempDir d("gpucheck-output");
  ASSERT_EQ(::mkfifo((d / "p").c_str(), 0600), 0);
  bool skipped = false;
  std::string err;
  EXPECT_TRUE(append_output(d / "p", "x", &skipped, &err)) << err;
  EXPECT_TRUE(skipped);
  EXPECT_TRUE(append_output(d / "a.md", "one\n", &skipped, &err)) << err;
  EXPECT_TRUE(append_output(d / "a.md", "two\n", &skipped, &err)) << err;
  EXPECT_FALSE(skipped);
  EXPECT_EQ(slurp(d / "a.md"), "one\ntwo\n");
  EXPECT_FALSE(append_output(d.str(), "x", &skipped, &err));
}

// Issue 18, item 4: `mkfifo f; --specs f` hung for ever; inputs that are not regular files
// are refused at once, a symlink loop named as such.
TEST(Input, NonRegularInputsAreRefusedAtOnce) {
  TempDir d("gpucheck-output");
  ASSERT_EQ(::mkfifo((d / "p").c_str(), 0600), 0);
  fs::create_symlink(d / "l1", d / "l2");
  fs::create_symlink(d / "l2", d / "l1");
  std::string text, err;
  EXPECT_FALSE(read_input_file(d / "p", 1 << 20, &text, &err));
  EXPECT_NE(err.find("is a FIFO"), std::string::npos) << err;
  EXPECT_FALSE(read_input_file(d / "l1", 1 << 20, &text, &err));
  EXPECT_NE(err.find("symbolic link loop"), std::string::npos) << err;
  EXPECT_FALSE(read_input_file(d.str(), 1 << 20, &text, &err));
  EXPECT_NE(err.find("is a folder"), std::string::npos) << err;
  EXPECT_FALSE(read_input_file(d / "none", 1 << 20, &text, &err));
  EXPECT_NE(err.find("no such file or folder"), std::string::npos) << err;
  std::ofstream(d / "big") << std::string(100, 'x');
  EXPECT_FALSE(read_input_file(d / "big", 10, &text, &err));
  EXPECT_TRUE(read_input_file(d / "big", 100, &text, &err)) << err;
  EXPECT_EQ(text.size(), 100u);
}

// Issue 36: a large input is mapped, not copied; the refusals are read_input_file's, word for word.
TEST(Input, MappedTextIsTheFileAndTheRefusalsAreUnchanged) {
  TempDir d("gpucheck-output");
  ASSERT_EQ(::mkfifo((d / "p").c_str(), 0600), 0);
  fs::create_symlink(d / "l1", d / "l2");
  fs::create_symlink(d / "l2", d / "l1");
  std::ofstream(d / "big") << std::string(100, 'x');
  std::ofstream(d / "empty");
  for (const std::string& path : {d / "p", d / "l1", d.str(), d / "none", d / "big"}) {
    std::string text, err_read, err_map;
    InputText mapped;
    EXPECT_FALSE(read_input_file(path, 10, &text, &err_read));
    EXPECT_FALSE(map_input_file(path, 10, &mapped, &err_map));
    EXPECT_EQ(err_map, err_read);
  }
  std::string err;
  InputText t;
  ASSERT_TRUE(map_input_file(d / "big", 100, &t, &err)) << err;
  EXPECT_TRUE(t.mapped());
  EXPECT_EQ(t.text(), std::string(100, 'x'));
  InputText moved(std::move(t));
  EXPECT_TRUE(moved.mapped());
  EXPECT_FALSE(t.mapped());  // NOLINT(bugprone-use-after-move): a moved-from text is empty
  EXPECT_TRUE(t.text().empty());
  EXPECT_EQ(moved.text(), std::string(100, 'x'));
  EXPECT_FALSE(moved.cut());
  moved.release();
  EXPECT_TRUE(moved.text().empty());
  ASSERT_TRUE(map_input_file(d / "empty", 100, &t, &err)) << err;  // nothing to map: read
  EXPECT_FALSE(t.mapped());
  EXPECT_TRUE(t.text().empty());
  InputText small(std::string("abc"));  // a short string moves its bytes: the view follows
  InputText small2(std::move(small));
  EXPECT_EQ(small2.text(), "abc");
}

// Issue 36: a mapped file truncated under the reader would raise SIGBUS at the first page past
// its new end; the pages read as zeros instead and the text says it was cut, after release too.
TEST(Input, MappedFileCutUnderTheReaderReadsZerosAndSaysSo) {
  TempDir d("gpucheck-output");
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::ofstream(d / "f") << std::string(3 * page + 5, 'y');
  std::string err;
  InputText t;
  ASSERT_TRUE(map_input_file(d / "f", 1 << 20, &t, &err)) << err;
  ASSERT_TRUE(t.mapped());
  ASSERT_EQ(::truncate((d / "f").c_str(), 10), 0);
  const std::string_view v = t.text();
  EXPECT_EQ(v[0], 'y');
  EXPECT_EQ(v[2 * page], '\0');
  EXPECT_EQ(v[3 * page + 4], '\0');
  EXPECT_TRUE(t.cut());
  t.release();
  EXPECT_TRUE(t.cut());
  InputText again;  // the table's entry is free and clean for the next file
  std::ofstream(d / "g") << std::string(3 * page, 'z');
  ASSERT_TRUE(map_input_file(d / "g", 1 << 20, &again, &err)) << err;
  EXPECT_EQ(again.text()[2 * page], 'z');
  EXPECT_FALSE(again.cut());
  ASSERT_EQ(::truncate((d / "g").c_str(), static_cast<off_t>(2 * page + 1)), 0);  // inside the last page: no SIGBUS
  EXPECT_EQ(again.text()[2 * page + 2], '\0');
  EXPECT_TRUE(again.cut());
}

// Issue 18, item 3: duplicate keys, the last one won.
TEST(JsonLoad, DuplicateKeysAreAnErrorNamingFileObjectAndKey) {
  nlohmann::ordered_json j;
  std::string err;
  EXPECT_FALSE(load_json(R"({"schema":1,"defaults":{"pcie_bandwidth_fraction":0.8,"pcie_bandwidth_fraction":0.01}})", "accept.json",
                         &j, &err));
  EXPECT_EQ(err, "accept.json: key \"pcie_bandwidth_fraction\" given twice in defaults (a parser keeps only the last: which one was meant?)");
  EXPECT_FALSE(load_json(R"({"b":[{"x":1},{"y":1,"y":2}]})", "r.json", &j, &err));
  EXPECT_NE(err.find("given twice in b[1]"), std::string::npos) << err;
  EXPECT_FALSE(load_json(R"({"a":1,"a":2})", "t.json", &j, &err));
  EXPECT_NE(err.find("in the top level"), std::string::npos) << err;
  EXPECT_TRUE(load_json(R"({"a":{"x":1},"b":{"x":1},"c":[{"x":1},{"x":2}]})", "ok.json", &j, &err)) << err;
  EXPECT_FALSE(load_json("{", "bad.json", &j, &err));
  EXPECT_EQ(err.rfind("bad.json: not valid JSON: ", 0), 0u) << err;
  EXPECT_FALSE(load_json(std::string(100, '[') + std::string(100, ']'), "deep.json", &j, &err));
  EXPECT_NE(err.find("nested deeper"), std::string::npos);
}

// Issue 36: the streamed list's elements arrive in order, objects flat, and never enter the document.
TEST(JsonLoad, StreamedListHandsElementsOverAndLeavesTheListEmpty) {
  struct Seen {
    std::size_t index;
    std::size_t members;  // flat members, or npos for a non-object
    nlohmann::ordered_json value;
  };
  std::vector<Seen> seen;
  JsonStream stream;
  stream.list_key = "benchmarks";
  stream.element = [&](std::size_t i, const JsonFlatObject* o, const nlohmann::ordered_json& other) {
    seen.push_back(o != nullptr ? Seen{i, o->size, o->to_json()} : Seen{i, std::string::npos, other});
  };
  JsonLoadOptions lo;
  lo.stream = &stream;
  nlohmann::ordered_json j;
  std::string err;
  ASSERT_TRUE(load_json(R"({"a":1,"benchmarks":[{"x":1,"y":[1,{"q":2}]},3,[4,5],{"z":{"w":"s"}},{"x":2}],"c":{"benchmarks":[7]}})",
                        "s.json", &j, &err, lo))
      << err;
  EXPECT_TRUE(stream.seen);
  EXPECT_EQ(stream.count, 5u);
  ASSERT_EQ(seen.size(), 5u);
  for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i].index, i);
  EXPECT_EQ(seen[0].members, 2u);
  EXPECT_EQ(seen[0].value.dump(), R"({"x":1,"y":[1,{"q":2}]})");
  EXPECT_EQ(seen[1].members, std::string::npos);
  EXPECT_EQ(seen[1].value, 3);
  EXPECT_EQ(seen[2].value.dump(), "[4,5]");
  EXPECT_EQ(seen[3].value.dump(), R"({"z":{"w":"s"}})");
  // The storage is reused: the last element does not see the earlier ones' members.
  EXPECT_EQ(seen[4].members, 1u);
  EXPECT_EQ(seen[4].value.dump(), R"({"x":2})");
  // Only the top level's list is streamed: a nested one of the same name stays in the document.
  EXPECT_EQ(j.dump(), R"({"a":1,"benchmarks":[],"c":{"benchmarks":[7]}})");
}

TEST(JsonLoad, StreamedElementsRefuseDuplicateKeysAtEveryLevel) {
  const auto load = [](const std::string& text, std::size_t* calls) {
    JsonStream stream;
    stream.list_key = "benchmarks";
    stream.element = [calls](std::size_t, const JsonFlatObject*, const nlohmann::ordered_json&) { ++*calls; };
    JsonLoadOptions lo;
    lo.stream = &stream;
    nlohmann::ordered_json j;
    std::string err;
    EXPECT_FALSE(load_json(text, "d.json", &j, &err, lo)) << text;
    return err;
  };
  std::size_t calls = 0;
  EXPECT_EQ(load(R"({"benchmarks":[{"a":1},{"a":1,"b":2,"a":3}]})", &calls),
            "d.json: key \"a\" given twice in benchmarks[1] (a parser keeps only the last: which one was meant?)");
  EXPECT_EQ(calls, 1u);  // the element with the duplicate is never handed over
  calls = 0;
  EXPECT_NE(load(R"({"benchmarks":[{"n":{"w":1,"w":2}}]})", &calls).find("given twice in benchmarks[0].n "), std::string::npos);
  EXPECT_EQ(calls, 0u);
  // Past the scan's bound the keys are hashed: the duplicate is found all the same, at either end.
  for (const std::string& dup : {std::string("k0"), std::string("k199")}) {
    std::string wide = R"({"benchmarks":[{"x":0},{)";
    // Appended piece by piece: g++ 12 warns (-Wrestrict, a false positive) on "\"k" + string.
    for (int i = 0; i < 200; ++i) wide.append("\"k").append(std::to_string(i)).append("\":").append(std::to_string(i)).append(",");
    wide.append("\"").append(dup).append("\":1}]}");
    calls = 0;
    std::string want = "d.json: key \"";
    want.append(dup).append("\" given twice in benchmarks[1] (a parser keeps only the last: which one was meant?)");
    EXPECT_EQ(load(wide, &calls), want);
    EXPECT_EQ(calls, 1u);
  }
  // A list named twice at the top level is a duplicate too.
  calls = 0;
  EXPECT_NE(load(R"({"benchmarks":[{"a":1}],"benchmarks":[]})", &calls).find("given twice in the top level"), std::string::npos);
}

TEST(JsonLoad, WideStreamedElementKeepsEveryMember) {
  std::string wide = R"({"benchmarks":[{)";
  for (int i = 0; i < 1000; ++i) wide.append(i ? ",\"c" : "\"c").append(std::to_string(i)).append("\":").append(std::to_string(i));
  wide += "},{\"c5\":1}]}";
  std::vector<std::size_t> sizes;
  double c999 = -1, second_c5 = -1;
  JsonStream stream;
  stream.list_key = "benchmarks";
  stream.element = [&](std::size_t i, const JsonFlatObject* o, const nlohmann::ordered_json&) {
    ASSERT_NE(o, nullptr);
    sizes.push_back(o->size);
    if (i == 0) c999 = o->find("c999")->get<double>();
    if (i == 1) {
      second_c5 = o->find("c5")->get<double>();
      EXPECT_EQ(o->find("c999"), nullptr);
    }
  };
  JsonLoadOptions lo;
  lo.stream = &stream;
  nlohmann::ordered_json j;
  std::string err;
  ASSERT_TRUE(load_json(wide, "w.json", &j, &err, lo)) << err;
  EXPECT_EQ(sizes, (std::vector<std::size_t>{1000, 1}));
  EXPECT_EQ(c999, 999);
  EXPECT_EQ(second_c5, 1);
}

// A text past the release step (64 MB) reads the same with its passed pages handed back, the
// sanitized copy (a bare NaN) included, and an error at its very end is the same line.
TEST(JsonLoad, ReleasingThePassedTextChangesNothingRead) {
  std::string big = R"({"benchmarks":[)";
  big.reserve(std::size_t{72} << 20);
  std::size_t entries = 0;
  while (big.size() < (std::size_t{70} << 20)) {
    big.append(entries ? "," : "").append(R"({"name":"case/)").append(std::to_string(entries)).append(R"(","real_time":1.5,"pad":")");
    big.append(200, 'x').append("\"}");
    ++entries;
  }
  const std::string good = big + R"(,{"name":"last","v":NaN}]})";
  const std::string bad = big + R"(,{"name":"last","v":1,]})";
  static constexpr NonFiniteMarks kMarks{"\"nan\"", "\"inf\"", "\"-inf\""};
  {  // with release_behind false this is every other load's path
    const bool release = true;
    std::size_t seen = 0;
    std::string last;
    JsonStream stream;
    stream.list_key = "benchmarks";
    stream.element = [&](std::size_t, const JsonFlatObject* o, const nlohmann::ordered_json&) {
      ++seen;
      last = o->find("name")->get<std::string>() + "=" + o->find(seen == entries + 1 ? "v" : "real_time")->dump();
    };
    JsonLoadOptions lo;
    lo.stream = &stream;
    lo.non_finite = &kMarks;
    lo.release_behind = release;
    std::string text = good;
    std::size_t rereads = 0;
    lo.reread = [&](std::string* again) {  // the file again, for the wording of a refusal
      ++rereads;
      *again = bad;
      return true;
    };
    nlohmann::ordered_json j;
    std::string err;
    ASSERT_TRUE(load_json(text, "big.json", &j, &err, lo)) << err;
    EXPECT_EQ(seen, entries + 1) << release;
    EXPECT_EQ(last, "last=\"nan\"") << release;
    text = bad;
    EXPECT_FALSE(load_json(text, "big.json", &j, &err, lo));
    EXPECT_EQ(err, "big.json: not valid JSON: parse error at line 1, column " + std::to_string(bad.size() - 1) +
                       ": syntax error while parsing object key - unexpected ']'; expected string literal")
        << release;
    EXPECT_EQ(rereads, 1u);  // only the refusal read the text again (its passed pages were handed back)
    EXPECT_EQ(text[text.size() / 2], '\0');
  }
}

}  // namespace
}  // namespace gpucheck
