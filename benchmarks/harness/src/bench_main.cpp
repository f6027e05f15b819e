// The one main() of every benchmark binary: the family file declares its Family
// (harness::family()), the harness does the rest (gpucheck/harness/main.hpp).
#include "gpucheck/harness/main.hpp"

int main(int argc, char** argv) { return gpucheck::harness::run_family(argc, argv, gpucheck::harness::family()); }
