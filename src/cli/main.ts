// The `swarm` command line: registers one command per file in this folder and turns SwarmErrors
// into one clear line on stderr with a non-zero exit code.
import { Command } from 'commander';
import { SwarmError } from '../errors.js';
import { packageVersion } from '../version.js';
import { registerBench } from './bench.js';
import { registerCompare } from './compare.js';
import { registerDoctor } from './doctor.js';
import { registerEval } from './eval.js';
import { registerModel } from './model.js';
import { registerReport } from './report.js';
import { registerRun } from './run.js';
import { registerServe } from './serve.js';
import { registerSft } from './sft.js';
import { registerTask } from './task.js';
import { registerTrain } from './train.js';
import { registerTrainerWorker } from './trainer-worker.js';

// A closed pipe (e.g. `swarm run ... | head`) ends the command quietly instead of crashing it.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

const program = new Command();
program
  .name('swarm')
  .description('s³: train swarms of language models to cooperate with multi-agent RL')
  .version(packageVersion);
registerBench(program);
registerCompare(program);
registerDoctor(program);
registerEval(program);
registerModel(program);
registerReport(program);
registerRun(program);
registerServe(program);
registerSft(program);
registerTask(program);
registerTrain(program);
registerTrainerWorker(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof SwarmError) {
    process.stderr.write(`swarm: ${error.message}\n`);
    process.exit(1);
  }
  throw error;
}
