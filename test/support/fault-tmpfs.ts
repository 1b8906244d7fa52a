import { spawnSync } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A tiny tmpfs for disk-full tests: mounted on a folder (root only), filled to the last byte on demand,
 * freed, and always unmounted.
 */

/** Why a tmpfs cannot be mounted here, or null when it can (tried once, on a scratch folder). */
export function tmpfsUnavailableReason(): string | null {
  if (process.platform !== "linux") return `tmpfs mounts need Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return "mounting a tmpfs needs root (run the tests as root, as CI does)";
  const probe = mkdtempSync(join(tmpdir(), "reins-tmpfs-probe-"));
  try {
    const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe], {
      encoding: "utf8",
    });
    if (mounted.status !== 0)
      return `mount -t tmpfs failed (${(mounted.stderr || String(mounted.error)).trim()}): a container without CAP_SYS_ADMIN?`;
    spawnSync("umount", [probe]);
    return null;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

/** Whether `dir` is a mount point right now. */
export function isMounted(dir: string): boolean {
  return readFileSync("/proc/self/mounts", "utf8")
    .split("\n")
    .some((line) => line.split(" ")[1] === dir);
}

/** Mounts a tmpfs of `sizeKiB` on `dir` (made if missing), owner-only like `.reins/`. */
export function mountTmpfs(dir: string, sizeKiB: number): void {
  mkdirSync(dir, { recursive: true });
  const result = spawnSync("mount", ["-t", "tmpfs", "-o", `size=${sizeKiB}k,mode=0700`, "tmpfs", dir], {
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`mount tmpfs on ${dir} failed: ${result.stderr}`);
}

/** Unmounts `dir` if it is mounted (lazily when busy, so a test never leaves a mount behind). */
export function unmountTmpfs(dir: string): void {
  if (!isMounted(dir)) return;
  if (spawnSync("umount", [dir]).status !== 0) spawnSync("umount", ["-l", dir]);
  if (isMounted(dir)) throw new Error(`could not unmount ${dir}`);
}

/** Writes `path` until the file system refuses with ENOSPC; returns the bytes written. */
export function fillDisk(path: string): number {
  const fd = openSync(path, "w");
  const chunk = Buffer.alloc(4096, 0x78);
  let written = 0;
  try {
    for (;;) written += writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
  } finally {
    closeSync(fd);
  }
  return written;
}
