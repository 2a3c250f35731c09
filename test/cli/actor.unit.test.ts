/**
 * Who an operator's command records (issue 35, item 8): `--by`, else `ISR_ACTOR`, else the AWS
 * caller of a deployed stack (STS, mocked), else the OS user; a bad `--by` is bad usage.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { actorOf, awsCaller, MAX_ACTOR_LENGTH } from '../../cli/actor.js';
import { UsageError } from '../../cli/errors.js';

const sts = mockClient(STSClient);
afterEach(() => {
  sts.reset();
});

const ARN = 'arn:aws:sts::123456789012:assumed-role/oncall/alice';
const none = () => Promise.resolve(undefined);

describe('actorOf', () => {
  it('takes --by first, then ISR_ACTOR, then the AWS caller, then the OS user', async () => {
    const caller = () => Promise.resolve(ARN);
    const env = { ISR_ACTOR: 'ci-bot', USER: 'alice' };
    expect(await actorOf({ by: 'bob', env, caller })).toBe('bob');
    expect(await actorOf({ by: undefined, env, caller })).toBe('ci-bot');
    expect(await actorOf({ by: undefined, env: { USER: 'alice' }, caller })).toBe(ARN);
    expect(await actorOf({ by: undefined, env: { USER: 'alice' }, caller: none })).toBe(
      'alice@isr-cli',
    );
  });

  it('refuses an empty, overlong or unprintable actor as bad usage', async () => {
    for (const by of ['', '  ', 'a'.repeat(MAX_ACTOR_LENGTH + 1), 'alice\nforged line']) {
      await expect(actorOf({ by, env: {}, caller: none })).rejects.toBeInstanceOf(UsageError);
    }
    await expect(actorOf({ by: undefined, env: { ISR_ACTOR: '' }, caller: none })).rejects.toThrow(
      /ISR_ACTOR must be/,
    );
    expect(await actorOf({ by: 'Zoë on call', env: {}, caller: none })).toBe('Zoë on call');
  });
});

describe('awsCaller', () => {
  const stack = { kind: 'stack', region: 'eu-west-1' } as const;

  it("is the ARN STS says the stack's credentials are", async () => {
    sts.on(GetCallerIdentityCommand).resolves({ Arn: ARN, Account: '123456789012' });
    expect(await awsCaller(stack, () => undefined, new STSClient({ region: 'eu-west-1' }))).toBe(
      ARN,
    );
    expect(sts.commandCalls(GetCallerIdentityCommand)).toHaveLength(1);
  });

  it('asks nothing locally, and notes a failure instead of failing the command', async () => {
    expect(
      await awsCaller({ kind: 'local', region: 'us-east-1' }, () => undefined),
    ).toBeUndefined();
    expect(sts.commandCalls(GetCallerIdentityCommand)).toHaveLength(0);
    sts.on(GetCallerIdentityCommand).rejects(new Error('ExpiredToken'));
    const notes: string[] = [];
    const client = new STSClient({ region: 'eu-west-1' });
    expect(await awsCaller(stack, (line) => notes.push(line), client)).toBeUndefined();
    expect(notes).toEqual([
      expect.stringMatching(/could not read the AWS caller \(ExpiredToken\)/),
    ]);
  });
});
