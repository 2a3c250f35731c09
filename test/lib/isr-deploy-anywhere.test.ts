/**
 * Deploys on any account (issue 31, fixes 7 and 8), on the synthesized template: the default
 * template reserves no concurrency and says so at synth; each reservation is an opt-in prop also
 * settable with `-c`; reservations an account cannot hold fail the synth by name; the queue
 * consumers are bounded by their event sources; an unknown `-c` key fails the synth with the
 * known ones, while CDK's own context passes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { Annotations, Match, type Template } from 'aws-cdk-lib/assertions';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { quotaLine, quotaOf, quotaProblems, UNRESERVED_MINIMUM } from '../../lib/isr-quota.js';
import type { IsrService } from '../../lib/isr-service.js';
import { resolveSettings } from '../../lib/isr-settings.js';
import { CONTEXT_KEYS, unknownContextKeys } from '../../lib/isr-stack.js';
import { cdkJsonContext, logicalIdOf, resourceOf, synthIsrStack } from './stack-fixture.js';

const functionsOf = (service: IsrService): Record<string, LambdaFunction> => ({
  origin: service.originFunction,
  worker: service.workerFunction,
  revalidate: service.revalidateFunction,
  sweeper: service.sweeperFunction,
  purger: service.purgerFunction,
});

const reservedOf = (template: Template, service: IsrService) =>
  Object.fromEntries(
    Object.entries(functionsOf(service)).map(([kind, fn]) => [
      kind,
      resourceOf<{ ReservedConcurrentExecutions?: number }>(template, logicalIdOf(fn)).Properties
        .ReservedConcurrentExecutions,
    ]),
  );

/** The synth's info line about the account's concurrency. */
const quotaInfo = (built: ReturnType<typeof synthIsrStack>): string[] =>
  Annotations.fromStack(built.stack)
    .findInfo('*', Match.stringLikeRegexp('^Lambda concurrency'))
    .map((message) => message.entry.data as string);

describe('a deploy on any account', () => {
  // One default synth and one with every reservation set from context, shared by the cases.
  const plain = synthIsrStack();
  const reserved = synthIsrStack({
    context: {
      originReservedConcurrency: '50',
      workerReservedConcurrency: '20',
      revalidateReservedConcurrency: '5',
      sweeperReservedConcurrency: '1',
    },
  });

  it('the default template reserves no concurrency for any function', () => {
    expect(reservedOf(plain.template, plain.service)).toEqual({
      origin: undefined,
      worker: undefined,
      revalidate: undefined,
      sweeper: undefined,
      purger: undefined,
    });
  });

  it('bounds the queue consumers by their event source, which reserves nothing (2..1000)', () => {
    const mappings = plain.template.findResources('AWS::Lambda::EventSourceMapping');
    const byFunction = Object.fromEntries(
      Object.values(mappings).map((mapping) => {
        const p = (
          mapping as {
            Properties: {
              FunctionName: { Ref: string };
              ScalingConfig?: { MaximumConcurrency: number };
            };
          }
        ).Properties;
        return [p.FunctionName.Ref, p.ScalingConfig?.MaximumConcurrency];
      }),
    );
    expect(byFunction).toEqual({
      [logicalIdOf(plain.service.workerFunction)]: 10,
      [logicalIdOf(plain.service.purgerFunction)]: 2,
    });
    expect(() => resolveSettings({ workerMaxConcurrency: 1 })).toThrow(/workerMaxConcurrency/);
    expect(() => resolveSettings({ workerMaxConcurrency: 1001 })).toThrow(/workerMaxConcurrency/);
  });

  it('takes each reservation from -c, as an opt-in prop', () => {
    expect(reservedOf(reserved.template, reserved.service)).toEqual({
      origin: 50,
      worker: 20,
      revalidate: 5,
      sweeper: 1,
      purger: undefined,
    });
    // A prop does the same, and 0 reserves none.
    const settings = resolveSettings({
      sweeperReservedConcurrency: 2,
      originReservedConcurrency: 0,
    });
    expect(settings).toMatchObject({
      sweeperReservedConcurrency: 2,
      originReservedConcurrency: undefined,
    });
    expect(() => synthIsrStack({ context: { originReservedConcurrency: 'lots' } })).toThrow(
      /context originReservedConcurrency must be an integer, got "lots"/,
    );
  });

  it('says at synth what the account needs: nothing by default, the sum + 100 otherwise', () => {
    expect(quotaInfo(plain)).toEqual([
      expect.stringMatching(/reserves none .* fits any account limit, a new account included/),
    ]);
    expect(quotaInfo(reserved)).toEqual([
      expect.stringMatching(
        /reserves 76 \(originReservedConcurrency=50, workerReservedConcurrency=20, revalidateReservedConcurrency=5, sweeperReservedConcurrency=1\), so the account needs a concurrency limit of at least 176 .* It fits Lambda's documented default of 1000/,
      ),
    ]);
  });

  it('refuses reservations the account limit cannot hold, naming them', () => {
    const refusal =
      /originReservedConcurrency=950.* add up to 950: .* needs a concurrency limit of 1050, above accountConcurrencyLimit \(1000\)/;
    expect(() => resolveSettings({ originReservedConcurrency: 950 })).toThrow(refusal);
    // Negative control: the same reservations fit a raised limit, and reserve as asked.
    expect(
      resolveSettings({ originReservedConcurrency: 950, accountConcurrencyLimit: 1050 }),
    ).toMatchObject({ originReservedConcurrency: 950 });
    // The limit from -c, as `aws lambda get-account-settings` gives it, judges the sum.
    expect(() =>
      synthIsrStack({
        context: { workerReservedConcurrency: '10', accountConcurrencyLimit: '50' },
      }),
    ).toThrow(
      /workerReservedConcurrency=10\) add up to 10: .* limit of 110, above accountConcurrencyLimit \(50\)/,
    );
    expect(quotaProblems({ ...resolveSettings({}), accountConcurrencyLimit: 10 })).toEqual([]);
    expect(quotaOf({ ...resolveSettings({}), originReservedConcurrency: 1 }).needed).toBe(
      1 + UNRESERVED_MINIMUM,
    );
  });
});

describe('the -c keys', () => {
  it('refuses an unknown key at synth, listing the known ones', () => {
    expect(() => synthIsrStack({ context: { renderOriginURL: 'https://x.example.com' } })).toThrow(
      /unknown context key 'renderOriginURL' \(-c\): CDK would ignore it\. Known keys: renderOriginUrl, preset, /,
    );
  });

  it("passes CDK's own context: cdk.json's flags, what the CLI adds, lookups, acknowledgements", () => {
    // What the CDK CLI (aws-cdk 2.1148) puts in the app's context besides cdk.json and -c.
    const cli = {
      'aws:cdk:enable-path-metadata': true,
      'aws:cdk:enable-asset-metadata': true,
      'aws:cdk:version-reporting': true,
      'aws:cdk:disable-version-reporting': true,
      'aws:cdk:disable-asset-staging': true,
      'aws:cdk:bundling-stacks': ['**'],
      '@aws-cdk/core:validationReportJson': false,
      // cdk.context.json: lookups, and what `cdk acknowledge` and `cdk cli-telemetry` write.
      'availability-zones:account=123456789012:region=eu-west-1': ['eu-west-1a'],
      'acknowledged-issue-numbers': [34892],
      'cli-telemetry': false,
    };
    expect(unknownContextKeys({ ...cdkJsonContext(), ...cli })).toEqual([]);
    expect(unknownContextKeys({ ...cli, prest: 'nextjs' })).toEqual(['prest']);
  });

  it('-c preset=nextjs reaches the construct', () => {
    const { service } = synthIsrStack({
      context: { preset: 'nextjs', renderOriginUrl: 'https://ssr.example.com' },
    });
    expect(service.settings.variantHeaders.map((variant) => variant.name)).toContain('rsc');
    expect(synthIsrStack().service.settings.variantHeaders).toEqual([]);
  });

  it('every key the docs pass with -c is one the stack reads', () => {
    const pages = [
      'README.md',
      ...readdirSync(new URL('../../docs', import.meta.url)).map((name) => `docs/${name}`),
    ];
    const shown = new Set(
      pages.flatMap((page) =>
        [
          ...readFileSync(new URL(`../../${page}`, import.meta.url), 'utf8').matchAll(
            /(?:^|\s)-c\s+([A-Za-z][\w-]*)=/g,
          ),
        ].map((match) => match[1] ?? ''),
      ),
    );
    expect(shown.size).toBeGreaterThan(5);
    expect([...shown].filter((key) => !Object.hasOwn(CONTEXT_KEYS, key))).toEqual([]);
  });
});

describe("DEPLOY.md's 'Before your first deploy'", () => {
  const page = readFileSync(new URL('../../docs/DEPLOY.md', import.meta.url), 'utf8');
  const section = page.split('## Before your first deploy')[1]?.split('\n## ')[0] ?? '';

  it('lists exactly the -c keys the stack reads, in its order', () => {
    const rows = [...section.matchAll(/^\| `([A-Za-z]+)` +\|/gm)].map((match) => match[1]);
    expect(rows).toEqual(Object.keys(CONTEXT_KEYS));
  });

  it('prints the quota line the default synth prints', () => {
    expect(section).toContain(`\n${quotaLine(quotaOf(resolveSettings({})))}\n`);
  });
});
