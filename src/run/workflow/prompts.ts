/** The prompts of the workflow's own agent iterations: drafting the spec (step 1) and planning (steps 2 to 5). */

/** Step 1: write the specification at `spec` from what the person asked for. */
export function draftPrompt(spec: string, request: string): string {
  return `# Draft the specification

You are in the Requirements phase of a spec-driven workflow. Write the specification of what is asked
below, as markdown, to the file \`${spec}\` (create it; write no other file).

## What to build

${request}

## How to write it

- One \`#\` title, then one \`##\` section per requirement area. Sections are what the plan's tasks will
  name and what reins hashes to notice later edits, so give each a short, stable heading.
- Under each section: what must be true when it is done, in plain sentences a test could check.
- No implementation plan and no tasks: a person approves this spec before planning begins.
`;
}

/** Steps 2 to 5: write the plan at `plan` for the spec `spec`, whose sections are `sections`. */
export function planPrompt(input: {
  spec: string;
  plan: string;
  sections: readonly string[];
  text: string;
  error: string | null;
}): string {
  const retry =
    input.error === null
      ? ""
      : `\n## Your last plan was refused\n\n${input.error}\n\nFix it: write the whole file again.\n`;
  return `# Plan the work

You are in the Planning phase of a spec-driven workflow. The specification \`${input.spec}\` is approved.
Write a plan for it to \`${input.plan}\` (write no other file): determine the dependencies, identify the
components, and break each component into tasks.

## The specification's sections

${input.sections.map((s) => `- ${s}`).join("\n")}

## The specification

${input.text}

## The plan format (reins.plan.yaml)

\`\`\`yaml
version: 1
name: <short name>
checks:
  <check name>: { command: <a shell command that exits 0 when it holds>, tier: fast | medium | slow }
tasks:                      # or components: [{ id, title, tasks: [...] }] to group them
  - id: <id: letters, digits, . _ ->
    title: <one line>
    checks: [<check names this task must pass>]
    deps: [<ids of tasks that must be done first>]      # optional
    acceptance: <what must be true>                     # optional
    spec: { file: ${input.spec}, sections: [<section headings this task implements>] }
\`\`\`

Every task must name, in \`spec:\`, the file \`${input.spec}\` and the sections it implements (headings as
listed above): when a section changes later, the tasks naming it are done again. Every task needs at least
one check that fails until the task is done.
${retry}`;
}
