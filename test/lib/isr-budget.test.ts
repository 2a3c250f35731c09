/**
 * The regeneration budget as deployed: the setting reaches the functions that read it, the
 * minute catch-up schedule and the backlog alarm exist only with a budget, and a budget of 0,
 * below 0 or not a number fails the synth.
 */
import { describe, expect, it } from '@jest/globals';
import { Match } from 'aws-cdk-lib/assertions';
import { DEFERRED_PK } from '../../lambda/core/page/budget.js';
import { SweeperMetric } from '../../lambda/core/operate/sweep.js';
import { BUDGET_ALARM_THRESHOLDS } from '../../lib/isr-budget.js';
import { logicalIdOf, policyStatementsOf, synthIsrStack } from './stack-fixture.js';

const withBudget = synthIsrStack({ service: { regenerationBudget: 50 } });
const withoutBudget = synthIsrStack();

const envOf = (template: typeof withBudget.template, functionId: string) =>
  (
    template.toJSON().Resources as Record<
      string,
      { Properties: { Environment?: { Variables?: Record<string, unknown> } } }
    >
  )[functionId]?.Properties.Environment?.Variables ?? {};

describe('the regeneration budget, deployed', () => {
  it('reaches the worker, the origin and the sweeper, and no other function', () => {
    const { service, template } = withBudget;
    for (const fn of [service.workerFunction, service.originFunction, service.sweeperFunction]) {
      expect(envOf(template, logicalIdOf(fn)).ISR_REGENERATION_BUDGET).toBe('50');
    }
    expect(
      envOf(template, logicalIdOf(service.revalidateFunction)).ISR_REGENERATION_BUDGET,
    ).toBeUndefined();
  });

  it('runs the sweeper every minute over deferred intents alone, without retries', () => {
    const { service, template } = withBudget;
    expect(service.deferredIntentsSchedule).toBeDefined();
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      Targets: [
        Match.objectLike({
          Input: JSON.stringify({ part: 'deferred' }),
          RetryPolicy: { MaximumRetryAttempts: 0 },
        }),
      ],
    });
  });

  it('alarms when deferred intents have waited 15 minutes, with a runbook line', () => {
    const { template } = withBudget;
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: SweeperMetric.DeferredIntentsWaiting,
      Statistic: 'Minimum',
      Period: 300,
      Threshold: BUDGET_ALARM_THRESHOLDS.deferredBacklog.threshold,
      EvaluationPeriods: BUDGET_ALARM_THRESHOLDS.deferredBacklog.evaluationPeriods,
      ComparisonOperator: 'GreaterThanThreshold',
      AlarmDescription: Match.stringLikeRegexp('Runbook: `isr budget`'),
    });
  });

  it('lets the sweeper forget the deferred rows it re-queued (its DeleteItem on the table)', () => {
    const { service, template } = withBudget;
    const { statements } = policyStatementsOf(template, logicalIdOf(service.sweeperRole));
    const deletes = statements.filter(
      (statement) =>
        [statement.Action].flat().includes('dynamodb:DeleteItem') &&
        (statement.Condition === undefined ||
          JSON.stringify(statement.Condition).includes(DEFERRED_PK)),
    );
    expect(deletes.map((statement) => statement.Sid)).toEqual(['ForgetUnlistedVersions']);
  });

  it('negative control: without a budget there is no schedule, alarm or setting', () => {
    const { service, template } = withoutBudget;
    expect(service.deferredIntentsSchedule).toBeUndefined();
    template.resourcePropertiesCountIs(
      'AWS::Events::Rule',
      { ScheduleExpression: 'rate(1 minute)' },
      0,
    );
    template.resourcePropertiesCountIs(
      'AWS::CloudWatch::Alarm',
      { MetricName: SweeperMetric.DeferredIntentsWaiting },
      0,
    );
    expect(
      envOf(template, logicalIdOf(service.workerFunction)).ISR_REGENERATION_BUDGET,
    ).toBeUndefined();
  });

  it.each([
    [0, /regenerationBudget must be an integer >= 1/],
    [-10, /regenerationBudget must be an integer >= 1/],
    [Number.NaN, /regenerationBudget must be an integer >= 1/],
    ['fifty' as unknown as number, /regenerationBudget must be a number, got "fifty"/],
  ])('fails the synth for a budget of %s', (regenerationBudget, reason) => {
    expect(() => synthIsrStack({ service: { regenerationBudget } })).toThrow(reason);
  });

  it('fails the synth for a context value that is not a number', () => {
    expect(() => synthIsrStack({ context: { regenerationBudget: 'lots' } })).toThrow(
      /regenerationBudget/,
    );
  });
});
