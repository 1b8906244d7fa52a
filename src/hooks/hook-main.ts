import { runHook } from "./run-hook.js";

/**
 * `reins hook <agent>` without the CLI framework or the server: the in-process fallback runs once per tool
 * call, so bin/reins.js takes this path straight away and loads only what answering a hook needs.
 */
export async function hookMain(agent: string): Promise<number> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const result = await runHook(agent, Buffer.concat(chunks), process.env, process.cwd());
  if (result.reply !== null) process.stdout.write(`${JSON.stringify(result.reply)}\n`);
  if (result.warning !== "") process.stderr.write(`${result.warning}\n`);
  return 0;
}
