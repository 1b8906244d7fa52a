/** Turns off zod's compiled parsers in the hook command, which parses one input and exits. */
import * as z from "zod";

// Imported first by hook-main.ts, before any schema is built. zod compiles a fast parser for each object
// schema the first time it parses with it: that pays off in the long-running server, not in a process that
// parses one hook input and exits (about 2 ms of code generation per call).
z.config({ jitless: true });
