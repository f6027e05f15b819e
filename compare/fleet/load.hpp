// Node folders on disk into the judge's NodeInput: what `gpucheck accept --out DIR` wrote on each
// node (DIR/accept.json beside DIR/gpuN/runs/*.json and DIR/node/runs/*.json). A folder given is a
// node folder when it holds results, else a parent whose subfolders are the nodes. A node folder
// that is empty, half-written (a temp left by a killed writer, a file that does not parse, no
// accept.json or one that does not read: accept did not finish) is named, not an error; the
// paths given that are not folders, or a parent with no node inside, are. accept.json's failed
// checks, cases and GPUs come along (NodeInput::recorded): the judge holds the files to them.
#pragma once

#include <string>
#include <vector>

#include "base/expected.hpp"
#include "base/filesystem.hpp"
#include "fleet/fleet.hpp"

namespace gpucheck::compare::fleet {

// Subfolders of a parent that are never nodes: the recheck runs, and a fleet's own --out.
inline constexpr const char* kRecheckFolder = "recheck";

// The folders `paths` name as load_nodes reads them: `nodes`, each node folder (a path that holds
// results, or a parent's subfolders, hidden ones, recheck/ and a fleet's own --out (a subfolder
// holding fleet.json) left out), and `parents`, the paths that are folders of node folders.
struct NodeFolders {
  std::vector<std::string> nodes, parents;
};
Expected<NodeFolders> node_folders(const FileSystem& fs, const std::vector<std::string>& paths);

Expected<std::vector<NodeInput>> load_nodes(const FileSystem& fs, const std::vector<std::string>& paths);

}  // namespace gpucheck::compare::fleet
