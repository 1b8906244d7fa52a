/** `reins serve --all`: the all-projects dashboard on loopback until SIGTERM or SIGINT. */
import { knownProjects } from "../../base/config/project-registry.js";
import { ReinsError } from "../../base/core/errors.js";
import { allStatus } from "../../guard/daemon/all-status.js";
import { createAllServer } from "../../server/all-server.js";
import type { Io } from "../io.js";

/** The port `reins serve --all` listens on unless `--port` says: not a project server's 7878. */
export const ALL_PORT = 7870;

/** Runs the all-projects server on `host:port` until the process is told to stop. */
export async function serveAll(io: Io, host: string, port: number): Promise<void> {
  const app = await createAllServer({
    host,
    env: io.env,
    status: () => allStatus(io.env),
    // Read anew each time: a project set up since the server started has its pages too.
    rootOf: (id) => knownProjects(io.env).find((p) => p.id === id)?.root ?? null,
    log: (line) => io.stderr(`${line}\n`),
  });
  let address: string;
  try {
    address = await app.listen({ host, port });
  } catch (error) {
    await app.close();
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE")
      throw new ReinsError("conflict", `${host}:${port} is taken: choose another --port (or --port 0)`);
    throw error;
  }
  io.stdout(
    `reins serving every project on ${address}/ (each project's dashboard under /p/<id>/; view: /api/all)\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => void app.close().then(resolve);
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
  });
}
