/** Boundary globs: the paths whose change makes an iteration run the medium checks too. */
import picomatch from "picomatch";

/**
 * Boundary globs: paths whose change makes an iteration run the medium checks too (integration tests at
 * module seams, schemas, public APIs). Globs match paths relative to the working tree, dot files included.
 */

/** A matcher for a set of globs, compiled once; no globs match nothing. */
export function boundaryMatcher(globs: string[]): (file: string) => boolean {
  if (globs.length === 0) return () => false;
  const match = picomatch(globs, { dot: true });
  return (file) => match(file.replaceAll("\\", "/").replace(/^\.\//, ""));
}

/** Whether any of `files` (paths relative to the working tree) matches any of `globs`. */
export function touchesBoundary(files: string[], globs: string[]): boolean {
  const match = boundaryMatcher(globs);
  return files.some(match);
}
