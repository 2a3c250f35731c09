/** Entry of the ops CLI: `npm run isr -- <command>` and the package's `isr` bin. */
import { progressOn } from './progress.js';
import { run } from './run.js';

// The SDK's notice about future Node versions is noise on every command (npm start hides it too).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

process.exitCode = await run(process.argv.slice(2), {
  out: (text) => console.log(text),
  err: (text) => console.error(text),
  env: process.env,
  progress: progressOn(process.stderr),
});
