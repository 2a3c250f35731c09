/** Entry of the ops CLI: `npm run isr -- <command>` and the package's `isr` bin. */
import { run } from './run.js';

process.exitCode = await run(process.argv.slice(2), {
  out: (text) => console.log(text),
  err: (text) => console.error(text),
  env: process.env,
});
