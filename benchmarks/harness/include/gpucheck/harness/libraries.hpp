// The library versions a family records in its results' context. Each is defined in the
// small library of that name (gpucheck::harness_cublas, _cudnn, _nccl), so a binary links
// and records only the libraries it uses; merged results carry all of them.
#pragma once

namespace gpucheck::harness {
void record_cublas_version();  // context cublas_version, e.g. "13.1.0"
void record_cudnn_version();   // context cudnn_version, e.g. "9.14.0"
void record_nccl_version();    // context nccl_version, e.g. "2.28.3"
}  // namespace gpucheck::harness
