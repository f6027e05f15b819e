#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

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
  EXPECT_EQ(refusal_reason({F::regular, F::regular}), "");
}

TEST(Output, TempIsBesideTheFileAndHidden) {
  EXPECT_EQ(temp_path_for("a/b/out.json", 42), "a/b/.out.json.tmp-42");
  EXPECT_EQ(temp_path_for("out.json", 7), ".out.json.tmp-7");
  EXPECT_EQ(temp_path_for("/out.json", 7), "/.out.json.tmp-7");
}

// A fresh folder under the system's temp folder, removed at the end.
class TempFolder {
 public:
  TempFolder() {
    std::string t = (fs::temp_directory_path() / "gpucheck-output-XXXXXX").string();
    if (::mkdtemp(t.data()) == nullptr) throw std::runtime_error("mkdtemp");
    path_ = t;
  }
  ~TempFolder() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(path_), fs::directory_iterator()));
  }

 private:
  fs::path path_;
};

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Output, ARegularFileIsReplacedAndNoTempRemains) {
  TempFolder d;
  std::string err;
  ASSERT_TRUE(write_output(d / "r.json", "first", &err)) << err;
  EXPECT_EQ(slurp(d / "r.json"), "first");
  ASSERT_TRUE(write_output(d / "r.json", "second, longer", &err)) << err;
  EXPECT_EQ(slurp(d / "r.json"), "second, longer");
  EXPECT_EQ(fs::status(d / "r.json").type(), fs::file_type::regular);
  EXPECT_EQ(d.entries(), 1u);  // no .r.json.tmp-PID left
}

TEST(Output, ALinkToARegularFileReplacesItsTargetAndStaysALink) {
  TempFolder d;
  std::string err;
  ASSERT_TRUE(write_output(d / "target.json", "old", &err));
  fs::create_symlink(d / "target.json", d / "link.json");
  ASSERT_TRUE(write_output(d / "link.json", "new", &err)) << err;
  EXPECT_TRUE(fs::is_symlink(d / "link.json"));
  EXPECT_EQ(slurp(d / "target.json"), "new");
  EXPECT_EQ(d.entries(), 2u);
}

TEST(Output, FailureLeavesNoTemp) {
  TempFolder d;
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

TEST(Output, AnAbandonedReplacementRemovesItsTemp) {
  TempFolder d;
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
  TempFolder d;
  fs::create_directory(d / "dir");
  std::string err;
  EXPECT_FALSE(write_output(d / "dir", "x", &err));
  EXPECT_NE(err.find("is a folder"), std::string::npos);
  EXPECT_TRUE(fs::is_directory(d / "dir"));
}

TEST(Output, AFifoWithoutAReaderIsAnErrorNotAHang) {
  TempFolder d;
  ASSERT_EQ(::mkfifo((d / "fifo").c_str(), 0600), 0);
  std::string err;
  EXPECT_FALSE(write_output(d / "fifo", "x", &err));
  EXPECT_NE(err.find("no reader"), std::string::npos) << err;
  EXPECT_EQ(fs::status(d / "fifo").type(), fs::file_type::fifo);  // never replaced
}

TEST(Output, AFifoAndALinkToOneAreWrittenInPlace) {
  TempFolder d;
  ASSERT_EQ(::mkfifo((d / "fifo").c_str(), 0600), 0);
  fs::create_symlink(d / "fifo", d / "link");
  const std::string data(1 << 20, 'x');  // more than a pipe holds: the writer waits for the reader
  for (const char* name : {"fifo", "link"}) {
    std::string got;
    std::thread t([&] {
      std::ifstream in(d / "fifo", std::ios::binary);  // blocks until the writer opens
      std::ostringstream s;
      s << in.rdbuf();
      got = s.str();
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
  TempFolder d;
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
  TempFolder d;
  EXPECT_EQ(path_facts(d / "none").type, FileType::missing);
  fs::create_symlink(d / "none", d / "dangling");
  const PathFacts f = path_facts(d / "dangling");
  EXPECT_EQ(f.type, FileType::symlink);
  EXPECT_EQ(f.target, FileType::missing);
  std::string err;
  EXPECT_FALSE(write_output(d / "dangling", "x", &err));
  EXPECT_FALSE(fs::exists(d / "none"));
}

}  // namespace
}  // namespace gpucheck
