#include "watch/command.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <condition_variable>
#include <ctime>
#include <mutex>
#include <map>
#include <set>
#include <thread>

#include "base/filesystem.hpp"
#include "base/output.hpp"
#include "results/results.hpp"
#include "gpucheck/core/stop.hpp"
#include "watch/child.hpp"
#include "watch/follow.hpp"
#include "watch/html.hpp"
#include "watch/record.hpp"
#include "watch/steps.hpp"

namespace gpucheck::compare {

const char* const kWatchUsage = R"(  gpucheck watch [--devices L] [--interval MS] [--out DIR] [--name N] [--step REGEX] -- COMMAND [ARGS...]
      runs COMMAND (its output passes through) while sampling NVML, GPM and the host, then says
      which link limits it (compute, memory, PCIe, launch/latency, starved, throttled, the host)
      --devices L      NVML indices to sample, e.g. 0,3 (default: all; the job's GPUs are those
                       its processes use)
      --interval MS    sampling period (default 100, at least 20)
      --out DIR        writes DIR/watch.json, DIR/results.json, DIR/watch.html (default watch-out)
      --name N         the case's name in results.json (default watch/<script or program>)
      --step REGEX     lines that match give step times: the first number at the first group
                       (or the match), unit ns/us/ms/s/s/it after it, none = ms; it/s is a rate
                       and left out; results.json then holds each step after warm-up
      exit status: the command's; 128+N when signal N ended it; 127 when it cannot start; 2 bad options
      (a GPUCHECK_CONTAINMENT other than pid-namespace, cgroup or subreaper among them)
  gpucheck watch --pid PID [--log FILE] [--duration S] [--devices L] [--interval MS] [--out DIR] [--name N] [--step REGEX]
      watches a job already running (its process tree, the GPUs NVML lists it on) until it ends,
      S seconds pass or Ctrl-C; step times from FILE, followed as tail -F (new lines only)
      exit status: 0 (the job is not watch's child: it has no status to pass on); 2 for a PID
      that does not exist or cannot be read, or a FILE that exists and is not a regular file
  gpucheck watch --judge watch.json [--out DIR]
      judges a recorded run again with today's rules; writes DIR (default watch-judged, never
      the record's own folder); exit 0, 2 when the record cannot be read
)";

namespace {

using Clock = std::chrono::steady_clock;
namespace gw = gpucheck::watch;

std::string iso_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S+00:00", &tm);
  return buf;
}

Expected<std::vector<unsigned>> parse_devices(const std::string& s) {
  std::vector<unsigned> out;
  if (s == "all") return out;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    const std::size_t comma = std::min(s.find(',', pos), s.size());
    const std::string part = s.substr(pos, comma - pos);
    auto n = cli::parse_count("--devices", part, 0, 1023);
    if (!n) return n.error();
    out.push_back(static_cast<unsigned>(*n));
    pos = comma + 1;
  }
  return out;
}

// Shared between the sampler thread and the main loop (progress, step times).
struct Shared {
  std::mutex m;
  std::condition_variable cv;
  bool stop = false;
  gw::Timeline timeline;
  std::set<unsigned> gpus_with_job_process;
  std::map<unsigned, std::set<std::string>> others;  // processes not the job's, per GPU ("4242 python3")
  std::map<unsigned, std::vector<gw::ProcessShare>> processes;  // every process per GPU, with its share
  std::optional<double> last_step_ms;
};

// The progress line's text now, with the terminal codes that redraw it in place.
std::string progress_now(Shared& sh, Clock::time_point t0) {
  std::lock_guard lock(sh.m);
  const GpuSample* g = nullptr;
  for (const auto& tl : sh.timeline.gpus)
    if (!tl.points.empty()) {
      g = &tl.points.back().s;
      break;
    }
  const auto cpu = sh.timeline.host.empty() ? std::nullopt : sh.timeline.host.back().h.cpu_pct;
  return "\r\033[K" + watch::progress_line(std::chrono::duration<double>(Clock::now() - t0).count(), sh.last_step_ms, g, cpu);
}

// The step lines of a run, parsed as they come (the command's output, or a followed log).
struct StepLines {
  std::vector<double> ms, at_s;  // each step's time, and when its line came
  int rate_lines = 0, unparsed = 0, limited = 0;
  void take(const watch::StepParser& step, std::string_view line, double t_s, Shared& sh) {
    const auto s = step.parse(line);
    if (s.kind == watch::StepLine::Kind::Time) {
      ms.push_back(s.ms);
      at_s.push_back(t_s);
      std::lock_guard lock(sh.m);
      sh.last_step_ms = s.ms;
    } else if (s.kind == watch::StepLine::Kind::Rate) {
      ++rate_lines;
    } else if (s.kind == watch::StepLine::Kind::NoNumber) {
      ++unparsed;
    } else if (s.kind == watch::StepLine::Kind::Limit) {
      ++limited;
    }
  }
};

void sample_loop(Shared& sh, const WatchDeps& deps, const std::vector<unsigned>& gpus, int pid, double interval_s,
                 Clock::time_point t0) {
  gpucheck::HostSampler host(*deps.proc, pid, static_cast<double>(::sysconf(_SC_CLK_TCK)),
                             static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)));
  int round = 0;
  auto next = Clock::now();
  for (;;) {
    const double t = std::chrono::duration<double>(Clock::now() - t0).count();
    std::vector<std::optional<GpuSample>> readings;
    for (unsigned i : gpus) readings.push_back(deps.nvml ? deps.nvml->sample(i) : std::nullopt);
    const HostSample h = host.read(t);
    // Every second: which GPUs the command's processes hold a context on.
    std::set<unsigned> holders;
    std::map<unsigned, std::set<std::string>> others;
    std::vector<GpuActivity> listed;
    if (deps.nvml && round % std::max(1, static_cast<int>(1.0 / interval_s)) == 0) {
      const std::vector<int>& tree = host.tree();
      listed = deps.nvml->activity();
      for (const auto& a : listed)
        for (const auto& p : a.processes) {
          if (std::binary_search(tree.begin(), tree.end(), static_cast<int>(p.pid))) holders.insert(a.nvml_index);
          else others[a.nvml_index].insert(std::to_string(p.pid) + (p.name.empty() ? "" : " " + p.name));
        }
    }
    {
      std::unique_lock lock(sh.m);
      for (std::size_t k = 0; k < gpus.size(); ++k)
        if (readings[k]) sh.timeline.gpus[k].points.push_back({t, *readings[k]});
      sh.timeline.host.push_back({t, h});
      sh.gpus_with_job_process.insert(holders.begin(), holders.end());
      for (const auto& [i, who] : others) sh.others[i].insert(who.begin(), who.end());
      for (const auto& a : listed) gw::add_process_reading(sh.processes[a.nvml_index], a.processes, host.tree());
      next += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(interval_s));
      if (next < Clock::now()) next = Clock::now();  // a slow NVML read: no burst to catch up
      if (sh.cv.wait_until(lock, next, [&] { return sh.stop; })) return;
    }
    ++round;
  }
}

// The record once the job is over: which GPUs were the job's, the notes, the steps, the verdict.
void complete_record(watch::WatchRun& run, const Shared& sh, const std::vector<unsigned>& wanted, const StepLines& sl, int cut_lines) {
  for (auto& g : run.timeline.gpus) {
    if (const auto it = sh.processes.find(g.index); it != sh.processes.end()) g.processes = gw::busiest_first(it->second);
    g.job_process = sh.gpus_with_job_process.count(g.index) > 0;
    if (g.job_process && sh.others.count(g.index))  // a GPU the job shares (up to 8 named)
      for (const auto& o : sh.others.at(g.index))
        if (g.other_processes.size() < 8) g.other_processes.push_back(o);
  }
  if (wanted.empty()) {
    bool any_holder = !sh.gpus_with_job_process.empty();
    bool any_active = false;
    for (const auto& g : run.timeline.gpus)
      for (const auto& p : g.points) any_active = any_active || p.s.util_gpu_pct.value_or(0) > 0;
    for (auto& g : run.timeline.gpus) {
      if (any_holder) g.in_job = sh.gpus_with_job_process.count(g.index) > 0;
      else if (any_active)
        g.in_job = std::any_of(g.points.begin(), g.points.end(), [](const gw::GpuPoint& p) { return p.s.util_gpu_pct.value_or(0) > 0; });
    }
    if (!any_holder && any_active && run.timeline.gpus.size() > 1)
      run.notes.push_back("NVML listed none of the command's processes (a container's pid namespace?): the job's GPUs are those that ran kernels");
  }
  if (cut_lines > 0)
    run.notes.push_back(std::to_string(cut_lines) + " output line" + (cut_lines == 1 ? " was" : "s were") +
                        " longer than 64 KiB: cut there for --step");
  if (sl.limited > 0)
    run.notes.push_back(std::to_string(sl.limited) + " line" + (sl.limited == 1 ? "" : "s") +
                        " hit the --step pattern's match limit (PCRE2): left out");
  run.steps = watch::step_stats(sl.ms, sl.rate_lines, sl.unparsed);
  run.timeline.step_ms = run.steps.ms;
  run.timeline.steps = watch::steps_window(sl.at_s, sl.ms, run.steps.warmup);
  run.verdict = gw::judge(run.timeline);
}

// Writes the run's three files into out_dir; the summary names them. False (the error said) when one fails.
bool write_record(const watch::WatchRun& run, const std::string& out_dir, cli::Context& ctx) {
  std::vector<std::string> written;
  const std::pair<const char*, std::string> files[] = {{"watch.json", watch::watch_json(run)},
                                                       {"results.json", watch::results_json(run)},
                                                       {"watch.html", watch::watch_html(run)}};
  for (const auto& [file, text] : files) {
    const std::string path = join_path(out_dir, file);
    if (auto w = ctx.fs.write_output(path, text); !w) {
      ctx.io.out += watch::summary_text(run, written);
      (void)cli::fail(ctx.io, w.error());
      return false;
    }
    written.push_back(path);
  }
  ctx.io.out += watch::summary_text(run, written);
  return true;
}

// A process's state from /proc/PID/stat: 0 when it cannot be read (gone), else its letter.
char process_state(const ProcReader& proc, int pid) {
  const auto text = proc.read(std::to_string(pid) + "/stat");
  if (!text) return 0;
  const auto close = text->rfind(')');
  if (close == std::string::npos || close + 2 >= text->size()) return 0;
  return (*text)[close + 2];
}

std::vector<std::string> command_of(const ProcReader& proc, int pid) {
  std::vector<std::string> argv;
  if (const auto text = proc.read(std::to_string(pid) + "/cmdline")) {
    std::size_t pos = 0;
    while (pos < text->size()) {
      const std::size_t nul = std::min(text->find('\0', pos), text->size());
      if (nul > pos) argv.push_back(text->substr(pos, nul - pos));
      pos = nul + 1;
    }
  }
  if (argv.empty()) argv.push_back("pid " + std::to_string(pid));
  return argv;
}

struct Attach {
  int pid = 0;
  std::optional<std::string> log;
  std::optional<double> duration_s;
};

// --pid: samples a running job's tree and GPUs, and follows its log, until it ends (gone or a
// zombie), the duration passes or a stop signal comes; then the record as for a launched one.
void attach_pid(const Attach& at, const std::optional<watch::StepParser>& step, watch::WatchRun& run, Shared& sh,
                const std::vector<unsigned>& gpus, const std::vector<unsigned>& wanted, const WatchDeps& deps) {
  StepLines steps;
  const auto t0 = Clock::now();
  auto since = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  std::optional<watch::FileFollower> follow;
  if (at.log)
    follow.emplace(*at.log, [&](std::string_view line) {
      if (step) steps.take(*step, line, since(), sh);
    });
  const gpucheck::StopPolled polled;  // a stop signal now only sets the flag: the record is still written
  std::thread sampler([&sh, &deps, gpus, pid = at.pid, interval_s = run.interval_s, t0] {
    sample_loop(sh, deps, gpus, pid, interval_s, t0);
  });
  const double tick_s = std::min(run.interval_s, 0.1);
  auto drawn = Clock::now();
  bool progress_drawn = false;
  for (;;) {
    if (follow) follow->poll();
    if (deps.progress && Clock::now() - drawn >= std::chrono::milliseconds(500)) {
      const std::string line = progress_now(sh, t0);
      (void)!::write(deps.err_fd, line.data(), line.size());
      drawn = Clock::now();
      progress_drawn = true;
    }
    const char state = process_state(*deps.proc, at.pid);
    if (state == 0 || state == 'Z' || state == 'X') {
      run.attach_end = "the job ended";
      break;
    }
    if (at.duration_s && since() >= *at.duration_s) {
      run.attach_end = "the duration passed";
      break;
    }
    if (deps.stop && deps.stop->load() != 0) {
      run.attach_end = "stopped (signal " + std::to_string(deps.stop->load()) + ")";
      break;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(tick_s));
  }
  if (progress_drawn) (void)!::write(deps.err_fd, "\r\033[K", 4);
  if (follow) {
    follow->poll();
    follow->finish();
  }
  {
    std::lock_guard lock(sh.m);
    sh.stop = true;
  }
  sh.cv.notify_all();
  sampler.join();
  run.end.seconds = since();
  run.timeline = std::move(sh.timeline);
  run.timeline.duration_s = run.end.seconds;
  if (follow && !follow->is_open()) {
    // "never appeared" only where nothing is there: else what it is (a folder made later, unreadable).
    std::string how = " never appeared";
    if (const auto why = watch::log_refusal(*at.log)) how = " " + *why;
    else if (::access(at.log->c_str(), F_OK) == 0) how = " appeared only as watching ended";
    run.notes.push_back("the log " + *at.log + how + ": no step lines");
  }
  complete_record(run, sh, wanted, steps, follow ? follow->cut_lines() : 0);
}

// --judge: a recorded run judged again, written into a folder of its own.
ExitStatus judge_record(const std::string& path, const std::string& out_dir, cli::Context& ctx) {
  CliOutput& io = ctx.io;
  const std::vector<NamedPath> inputs{{"--judge", path}};
  std::vector<NamedPath> outputs;
  for (const char* f : {"watch.json", "results.json", "watch.html"}) outputs.push_back({"--out", join_path(out_dir, f)});
  if (auto k = ctx.fs.kind(out_dir); k != FileSystem::Kind::Missing && k != FileSystem::Kind::Directory)
    return cli::fail(io, Error{"--out", out_dir + " exists and is not a folder"});
  if (auto c = check_output_folder(ctx.fs, {"--out", out_dir}, inputs); !c) return cli::fail(io, c.error());
  if (auto c = check_outputs(ctx.fs, outputs, inputs); !c) return cli::fail(io, c.error());
  auto text = ctx.fs.read(path, kMaxFileBytes);
  if (!text) return cli::fail(io, text.error());
  auto run = watch::read_watch_json(*text, path);
  if (!run) return cli::fail(io, run.error());
  run->verdict = gw::judge(run->timeline);
  if (auto made = ctx.fs.make_dirs(out_dir); !made)
    return cli::fail(io, Error{"--out", "cannot create " + out_dir + ": " + made.error().str()});
  return write_record(*run, out_dir, ctx) ? ExitStatus::Ok : ExitStatus::BadInput;
}

}  // namespace

ExitStatus run_watch(const std::vector<std::string>& args, cli::Context& ctx, const WatchDeps& deps) {
  CliOutput& io = ctx.io;
  const auto dash = std::find(args.begin() + std::min<std::ptrdiff_t>(2, static_cast<std::ptrdiff_t>(args.size())), args.end(), "--");
  const std::vector<std::string> own(args.begin(), dash);
  std::vector<std::string> command(dash == args.end() ? args.end() : dash + 1, args.end());
  auto a = cli::parse_args(own, 2, {{"--devices", "--interval", "--out", "--name", "--step", "--judge", "--pid", "--log", "--duration"}, {}}, "watch");
  if (!a) return cli::fail(io, a.error());
  if (const auto judged = cli::value(*a, "--judge")) {
    for (const char* o : {"--devices", "--interval", "--name", "--step", "--pid", "--log", "--duration"})
      if (cli::value(*a, o)) return cli::fail(io, Error{"--judge", std::string("takes no ") + o + ": the record has its own"});
    if (!command.empty() || !a->positional.empty())
      return cli::fail(io, Error{"--judge", "takes no command: it judges a recorded run again"});
    return judge_record(*judged, cli::value(*a, "--out").value_or("watch-judged"), ctx);
  }
  if (!a->positional.empty() && command.empty()) command = a->positional;  // "gpucheck watch cmd" without --
  else if (!a->positional.empty())
    return cli::fail(io, Error{"watch", "unexpected \"" + a->positional[0] + "\" before -- (the command goes after --)"});
  Attach at;
  if (const auto v = cli::value(*a, "--pid")) {
    auto n = cli::parse_count("--pid", *v, 1, 1 << 22);
    if (!n) return cli::fail(io, n.error());
    at.pid = static_cast<int>(*n);
    if (!command.empty()) return cli::fail(io, Error{"--pid", "takes no command: it watches a job already running"});
    if (process_state(*deps.proc, at.pid) == 0)
      return cli::fail(io, Error{"--pid", "no process " + *v + " (or its /proc/" + *v + "/stat cannot be read)"});
    at.log = cli::value(*a, "--log");
    if (at.log && !cli::value(*a, "--step"))
      return cli::fail(io, Error{"--log", "needs --step (the pattern of the log's step lines)"});
    if (at.log)
      if (const auto why = watch::log_refusal(*at.log)) return cli::fail(io, Error{"--log", *at.log + " " + *why});
    if (const auto d = cli::value(*a, "--duration")) {
      auto secs = cli::parse_count("--duration", *d, 1, 30 * 86400);
      if (!secs) return cli::fail(io, secs.error());
      at.duration_s = static_cast<double>(*secs);
    }
    command = command_of(*deps.proc, at.pid);
  } else {
    for (const char* o : {"--log", "--duration"})
      if (cli::value(*a, o)) return cli::fail(io, Error{o, "goes with --pid (a launched command's output is read directly)"});
  }
  if (command.empty()) return cli::fail(io, Error{"watch", "needs a command: gpucheck watch [options] -- COMMAND [ARGS...]"});
  double interval_s = 0.1;
  if (auto v = cli::value(*a, "--interval")) {
    auto n = cli::parse_count("--interval", *v, 20, 60000);
    if (!n) return cli::fail(io, n.error());
    interval_s = *n / 1000.0;
  }
  std::vector<unsigned> wanted;
  if (auto v = cli::value(*a, "--devices")) {
    auto d = parse_devices(*v);
    if (!d) return cli::fail(io, d.error());
    wanted = *d;
  }
  std::optional<watch::StepParser> step;
  const auto step_regex = cli::value(*a, "--step");
  if (step_regex) {
    auto p = watch::StepParser::make(*step_regex);
    if (!p) return cli::fail(io, p.error());
    step = std::move(*p);
  }
  if (at.pid == 0)  // a bad value would otherwise read as the command's failure to start (127)
    if (auto c = watch::check_containment_env(deps.containment_env); !c) return cli::fail(io, c.error());
  const std::string out_dir = cli::value(*a, "--out").value_or("watch-out");
  if (auto k = ctx.fs.kind(out_dir); k != FileSystem::Kind::Missing && k != FileSystem::Kind::Directory)
    return cli::fail(io, Error{"--out", out_dir + " exists and is not a folder"});

  // The record's folder first: a run whose record cannot be written is refused before it starts.
  if (auto made = ctx.fs.make_dirs(out_dir); !made)
    return cli::fail(io, Error{"--out", "cannot create " + out_dir + ": " + made.error().str()});
  const auto name = cli::value(*a, "--name");
  if (name && name->find_first_not_of(" \t") == std::string::npos)
    return cli::fail(io, Error{"--name", "is empty: the case needs a name (compare refuses a blank one)"});

  watch::WatchRun run;
  run.command = command;
  run.name = name.value_or(watch::default_case_name(command));
  run.interval_s = interval_s;
  run.date = iso_now();
  run.step_regex = step_regex;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) run.host_name = host;
  if (auto cpuinfo = deps.proc->read("cpuinfo")) run.host_cpu = gpucheck::host_cpu_from_proc(*cpuinfo);
  if (auto v = deps.proc->read("driver/nvidia/version")) run.driver_version = gpucheck::driver_version_from_proc(*v);

  // Which GPUs: --devices, else every one NVML sees.
  Shared sh;
  std::vector<unsigned> gpus;
  if (deps.nvml) {
    const unsigned count = deps.nvml->device_count();
    if (wanted.empty())
      for (unsigned i = 0; i < count; ++i) gpus.push_back(i);
    for (unsigned i : wanted) {
      if (i >= count)
        return cli::fail(io, Error{"--devices", "no GPU " + std::to_string(i) + " (NVML sees " + std::to_string(count) + ")"});
      gpus.push_back(i);
    }
    const auto act = deps.nvml->activity();
    for (unsigned i : gpus) {
      gw::GpuTimeline g;
      g.index = i;
      for (const auto& x : act)
        if (x.nvml_index == i) {
          g.name = x.name;
          g.uuid = x.uuid;
        }
      g.gpm = deps.nvml->gpm_supported(i);
      if (g.gpm && !*g.gpm) run.notes.push_back("GPU " + std::to_string(i) + " has no GPM: no SM active, tensor or DRAM figures");
      sh.timeline.gpus.push_back(std::move(g));
    }
    if (gpus.empty()) run.no_gpu_reason = "NVML sees no GPU";
  } else {
    run.no_gpu_reason = deps.nvml_error.empty() ? "NVML not available" : deps.nvml_error;
  }

  if (at.pid > 0) {
    run.attached_pid = at.pid;
    attach_pid(at, step, run, sh, gpus, wanted, deps);
    return write_record(run, out_dir, ctx) ? ExitStatus::Ok : ExitStatus::BadInput;
  }

  // Run it. Steps are parsed as lines come; the samplers start with the command.
  StepLines steps;
  const auto t0 = Clock::now();
  std::thread sampler;
  bool progress_drawn = false;
  watch::ChildIo cio;
  cio.out_fd = deps.out_fd;
  cio.err_fd = deps.err_fd;
  cio.tick_s = 0.5;
  std::string last_stderr_line;
  cio.on_line = [&](std::string_view line, bool is_stderr) {
    if (is_stderr && line.find_first_not_of(" \t") != std::string_view::npos) last_stderr_line = std::string(line.substr(0, 300));
    if (step) steps.take(*step, line, std::chrono::duration<double>(Clock::now() - t0).count(), sh);
  };
  cio.on_relay_stopped = [&] {
    const char* said = "gpucheck watch: our output is closed: the command's output is no longer shown (it runs on)\n";
    (void)!::write(deps.err_fd, said, std::char_traits<char>::length(said));
  };
  cio.on_start = [&](int pid) {
    sampler = std::thread([&sh, &deps, gpus, pid, interval_s, t0] { sample_loop(sh, deps, gpus, pid, interval_s, t0); });
  };
  auto clear_progress = [&] {
    if (!progress_drawn) return;
    const char* clear = "\r\033[K";
    (void)!::write(deps.err_fd, clear, 4);
    progress_drawn = false;
  };
  cio.before_output = clear_progress;
  if (deps.progress)
    cio.on_tick = [&] {
      const std::string line = progress_now(sh, t0);
      (void)!::write(deps.err_fd, line.data(), line.size());
      progress_drawn = true;
    };
  run.end = watch::run_child(command, cio);
  clear_progress();
  {
    std::lock_guard lock(sh.m);
    sh.stop = true;
  }
  sh.cv.notify_all();
  if (sampler.joinable()) sampler.join();
  if (run.end.kind == watch::ChildEnd::Kind::CouldNotStart) {
    io.err += "gpucheck watch: " + command[0] + ": " + run.end.error + "\n";
    return static_cast<ExitStatus>(127);
  }

  run.timeline = std::move(sh.timeline);
  run.timeline.duration_s = run.end.seconds;
  run.timeline.exit_status = run.end.status();
  run.timeline.last_stderr_line = last_stderr_line;
  complete_record(run, sh, wanted, steps, run.end.cut_lines);

  // No record is a failure of watch's own, whatever the command's status.
  if (!write_record(run, out_dir, ctx)) return ExitStatus::BadInput;
  return static_cast<ExitStatus>(run.end.status());
}

ExitStatus cmd_watch(const std::vector<std::string>& args, cli::Context& ctx) {
  WatchDeps deps;
  std::string err;
  std::unique_ptr<gpucheck::NvmlApi> nvml = gpucheck::load_nvml(&err);
  deps.nvml = nvml.get();
  deps.nvml_error = err;
  gpucheck::DirProcReader proc("/proc");
  deps.proc = &proc;
  deps.progress = ::isatty(STDERR_FILENO) != 0;
  deps.stop = &gpucheck::stop_flag();
  if (const char* e = std::getenv("GPUCHECK_CONTAINMENT")) deps.containment_env = e;
  return run_watch(args, ctx, deps);
}

}  // namespace gpucheck::compare
