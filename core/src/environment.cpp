// The table of timing variables. Refused: CUDA_LAUNCH_BLOCKING (every launch waits for its
// kernel: eager chains several times slower, docs/GATE.md, and the stream hold the engine
// times device work with cannot be set up at all) and NVIDIA_TF32_OVERRIDE=0 (cuBLAS and cuDNN
// drop TF32, so a case named tf32 would measure fp32). Everything else is recorded and shown.
#include "gpucheck/core/environment.hpp"

#include <algorithm>
#include <array>

namespace gpucheck {
namespace {

constexpr std::array<std::string_view, 2> kBlockingHarmless{"", "0"};
constexpr std::array<std::string_view, 2> kTf32Harmless{"", "1"};

constexpr std::array<TimingVariable, 14> kVariables{{
    {"CUDA_LAUNCH_BLOCKING", false, EnvEffect::Refuse, kBlockingHarmless,
     "makes every kernel launch wait until the kernel has run: launch figures measure the whole kernel, and the "
     "stream hold that times device work cannot be set up"},
    {"NVIDIA_TF32_OVERRIDE", false, EnvEffect::Refuse, kTf32Harmless,
     "turns TF32 off in cuBLAS and cuDNN: the cases named tf32 would measure fp32"},
    {"CUDA_DEVICE_MAX_CONNECTIONS", false, EnvEffect::Record, {},
     "how many hardware queues the streams share: 1 serialises independent streams (bidirectional copies, lanes)"},
    {"CUBLAS_WORKSPACE_CONFIG", false, EnvEffect::Record, {}, "the workspace cuBLAS may use: it limits the algorithms it picks"},
    {"CUBLASLT_LOG_LEVEL", false, EnvEffect::Record, {}, "cuBLASLt logs every call: host time per GEMM grows"},
    {"CUBLASLT_LOG_MASK", false, EnvEffect::Record, {}, "cuBLASLt logs every call: host time per GEMM grows"},
    {"CUBLAS_LOGINFO_DBG", false, EnvEffect::Record, {}, "cuBLAS logs every call: host time per GEMM grows"},
    {"CUDNN_LOGLEVEL_DBG", false, EnvEffect::Record, {}, "cuDNN logs every call: host time per convolution grows"},
    {"CUDNN_LOGINFO_DBG", false, EnvEffect::Record, {}, "cuDNN (before 9) logs every call"},
    {"CUDNN_LOGDEST_DBG", false, EnvEffect::Record, {}, "where cuDNN's log goes"},
    {"CUDA_MODULE_LOADING", false, EnvEffect::Record, {}, "when kernels load (lazy or eager): first calls and memory use"},
    {"CUDA_FORCE_PTX_JIT", false, EnvEffect::Record, {}, "kernels compiled from PTX at load instead of the built SASS"},
    {"GPUCHECK_COOLDOWN", false, EnvEffect::Record, {},
     "power bursts wait for the card's power and temperature to fall under these limits first (ci/gemm_parity.sh)"},
    {"NCCL_", true, EnvEffect::Record, {}, "NCCL's algorithms, protocols, channels and transports"},
}};

const TimingVariable* find(std::string_view name) {
  for (const TimingVariable& v : kVariables)
    if (v.prefix ? name.starts_with(v.name) && name.size() > v.name.size() : name == v.name) return &v;
  return nullptr;
}

}  // namespace

std::span<const TimingVariable> timing_variables() { return kVariables; }

Environment timing_environment(const char* const* envp) {
  Environment out;
  for (const char* const* e = envp; e != nullptr && *e != nullptr; ++e) {
    const std::string_view kv = *e;
    const std::size_t eq = kv.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    const std::string_view name = kv.substr(0, eq);
    if (find(name) != nullptr) out.emplace_back(std::string(name), std::string(kv.substr(eq + 1)));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first == b.first; }), out.end());
  return out;
}

std::optional<std::string> environment_refusal(const Environment& env) {
  for (const TimingVariable& v : kVariables) {
    if (v.effect != EnvEffect::Refuse) continue;
    for (const auto& [name, value] : env) {
      if (name != v.name) continue;
      if (std::find(v.harmless.begin(), v.harmless.end(), value) != v.harmless.end()) continue;
      return name + "=" + value + " " + std::string(v.why) + "; unset it to measure";
    }
  }
  return std::nullopt;
}

std::string environment_record(const Environment& env) {
  std::string s;
  for (const auto& [name, value] : env) s += (s.empty() ? "" : "; ") + name + "=" + value;
  return s;
}

Environment parse_environment_record(std::string_view record) {
  Environment out;
  std::size_t at = 0;
  while (at < record.size()) {
    // The next "; NAME=" whose NAME is a timing variable ends this entry.
    std::size_t end = record.size();
    for (std::size_t p = record.find("; ", at); p != std::string_view::npos; p = record.find("; ", p + 2)) {
      const std::size_t eq = record.find('=', p + 2);
      if (eq != std::string_view::npos && find(record.substr(p + 2, eq - p - 2)) != nullptr) {
        end = p;
        break;
      }
    }
    const std::string_view kv = record.substr(at, end - at);
    if (const std::size_t eq = kv.find('='); eq != std::string_view::npos && eq > 0)
      out.emplace_back(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
    at = end == record.size() ? end : end + 2;
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<EnvironmentChange> environment_changes(const Environment& base, const Environment& cur) {
  std::vector<EnvironmentChange> out;
  std::size_t i = 0, j = 0;
  while (i < base.size() || j < cur.size()) {
    if (j == cur.size() || (i < base.size() && base[i].first < cur[j].first)) {
      out.push_back({base[i].first, base[i].second, std::nullopt});
      ++i;
    } else if (i == base.size() || cur[j].first < base[i].first) {
      out.push_back({cur[j].first, std::nullopt, cur[j].second});
      ++j;
    } else {
      if (base[i].second != cur[j].second) out.push_back({base[i].first, base[i].second, cur[j].second});
      ++i;
      ++j;
    }
  }
  return out;
}

}  // namespace gpucheck
