/**
 * The folders of a list (repository paths, `/`-separated) below no other folder of it, each once, in order: a rescan,
 * or a count, of those covers the rest. A folder's own parents sort before it, so one pass over the sorted list
 * finds them.
 */
export function outermostFolders(folders: Iterable<string>): string[] {
  const sorted = [...new Set(folders)].sort();
  return sorted.filter(
    (folder, index) => !sorted.slice(0, index).some((other) => folder.startsWith(`${other}/`)),
  );
}
