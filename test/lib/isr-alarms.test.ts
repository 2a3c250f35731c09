// CDK's Template methods (hasResourceProperties, resourceCountIs, ...) are the assertions here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { Duration, Stack } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { METRICS_NAMESPACE as EMITTED_NAMESPACE } from '../../lambda/shared/observability.js';
import { alarmsOf } from '../../lib/isr-alarms.js';
import { METRICS_NAMESPACE, OriginMetricName } from '../../lib/isr-metrics.js';
import { getAtt, logicalIdOf, serviceIds, synthIsrStack } from './stack-fixture.js';

interface AlarmJson {
  Properties: {
    AlarmDescription: string;
    Threshold: number;
    EvaluationPeriods: number;
    Metrics?: { Id: string; Expression?: string; MetricStat?: { Metric: unknown } }[];
    AlarmActions?: unknown[];
    OKActions?: unknown[];
  };
  Condition?: string;
}

const alarmOf = (template: Template, logicalId: string) =>
  (template.toJSON() as { Resources: Record<string, AlarmJson> }).Resources[logicalId];

const pager = 'arn:aws:sns:us-east-1:123456789012:pager';
// Six backend (the purge DLQ's among them), four viewer (one only in us-east-1), four on the
// sweeper and its reports.
const ALARM_COUNT = 14;

describe('IsrService alarms', () => {
  const { template, service } = synthIsrStack();
  const ids = serviceIds(service);
  const alarmId = (name: keyof typeof service.alarms) => {
    const alarm = service.alarms[name];
    if (alarm === undefined) throw new Error(`no ${name} alarm`);
    return logicalIdOf(alarm);
  };

  it('cover the backend and what viewers feel, every one exposed on the construct', () => {
    template.resourceCountIs('AWS::CloudWatch::Alarm', ALARM_COUNT);
    expect(alarmsOf(service.alarms)).toHaveLength(ALARM_COUNT);
  });

  it('give every alarm a stated threshold and a one-line runbook', () => {
    for (const alarm of alarmsOf(service.alarms)) {
      const { Properties } = alarmOf(template, logicalIdOf(alarm));
      expect(typeof Properties.Threshold).toBe('number');
      expect(Properties.AlarmDescription).toMatch(/^ISR: .+ Runbook: .+/);
      expect(Properties.AlarmDescription).not.toContain('\n');
    }
  });

  it('fire on a queue backlog and on any worker or origin error or origin throttle', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [{ Name: 'QueueName', Value: getAtt(ids.queue, 'QueueName') }],
      Threshold: 300,
    });
    for (const [fn, metric] of [
      [ids.worker, 'Errors'],
      [ids.origin, 'Errors'],
      [ids.origin, 'Throttles'],
    ] as const) {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/Lambda',
        MetricName: metric,
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: fn } }],
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
      });
    }
  });

  it('fire on each new dead letter, whether the worker sent it or SQS redrove it', () => {
    const { Properties } = alarmOf(template, alarmId('deadLetters'));
    expect(Properties.Threshold).toBe(0);
    const metric = (id: string) =>
      Properties.Metrics?.find((entry) => entry.Id === id)?.MetricStat?.Metric;
    expect(metric('sent')).toEqual({
      Namespace: 'AWS/SQS',
      MetricName: 'NumberOfMessagesSent',
      Dimensions: [{ Name: 'QueueName', Value: getAtt(ids.dlq, 'QueueName') }],
    });
    expect(metric('visible')).toMatchObject({ MetricName: 'ApproximateNumberOfMessagesVisible' });
    const expression = Properties.Metrics?.find((entry) => entry.Expression)?.Expression;
    expect(expression).toContain('DIFF(FILL(visible, 0))');
    expect(expression).toContain('FILL(sent, 0)');
  });

  it("fire on each new purge dead letter, at its own threshold, never on the regeneration DLQ's", () => {
    const { Properties } = alarmOf(template, alarmId('purgeDeadLetters'));
    expect(Properties.Threshold).toBe(0);
    expect(Properties.AlarmDescription).toMatch(/purge dead-letter queue.*Runbook: .*redrive/);
    const queueOf = (alarm: AlarmJson) =>
      alarm.Properties.Metrics?.find((entry) => entry.Id === 'sent')?.MetricStat?.Metric;
    expect(queueOf(alarmOf(template, alarmId('purgeDeadLetters')))).toEqual({
      Namespace: 'AWS/SQS',
      MetricName: 'NumberOfMessagesSent',
      Dimensions: [
        {
          Name: 'QueueName',
          Value: getAtt(logicalIdOf(service.purgeDeadLetterQueue), 'QueueName'),
        },
      ],
    });
    // Control: the regeneration DLQ's alarm watches another queue.
    expect(queueOf(alarmOf(template, alarmId('deadLetters')))).not.toEqual(
      queueOf(alarmOf(template, alarmId('purgeDeadLetters'))),
    );
    const raised = synthIsrStack({ service: { purgeDeadLetterAlarmThreshold: 3 } });
    const alarm = raised.service.alarms.purgeDeadLetters;
    expect(alarmOf(raised.template, logicalIdOf(alarm)).Properties.Threshold).toBe(3);
  });

  it("rate the origin's misses and failures among its page responses, from its EMF metrics", () => {
    expect(METRICS_NAMESPACE).toBe(EMITTED_NAMESPACE);
    const handler = readFileSync(
      new URL('../../lambda/origin/handler.ts', import.meta.url),
      'utf8',
    );
    // Emitted by the origin's pass-through (issue 21, the origin side): drop them from this list
    // once its handler counts them.
    const pending: string[] = [OriginMetricName.PassThrough, OriginMetricName.HitForPass];
    const required = Object.values(OriginMetricName).filter(
      (name) => !pending.includes(name) || handler.includes(`'${name}'`),
    );
    expect(required.length).toBeGreaterThanOrEqual(Object.keys(OriginMetricName).length - 2);
    for (const name of required) expect(handler).toContain(`'${name}'`);

    for (const [name, part, threshold, periods] of [
      ['missRate', 'CacheMisses', 50, 3],
      ['renderFailureRate', 'OriginUnavailable', 5, 2],
    ] as const) {
      const { Properties } = alarmOf(template, alarmId(name));
      expect(Properties).toMatchObject({ Threshold: threshold, EvaluationPeriods: periods });
      expect(Properties.Metrics?.find((entry) => entry.Id === 'part')?.MetricStat?.Metric).toEqual({
        Namespace: 'FaceTheoryIsr',
        MetricName: part,
        Dimensions: [{ Name: 'service', Value: 'isr-origin' }],
      });
      expect(Properties.Metrics?.find((entry) => entry.Expression)?.Expression).toMatch(
        /^IF\(\(FILL\(part, 0\) \+ FILL\(other0, 0\) \+ .*\) >= 100, 100 \* FILL\(part, 0\) \/ /,
      );
    }
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'FaceTheoryIsr',
      MetricName: 'EnqueueFailures',
      Dimensions: [{ Name: 'service', Value: 'isr-origin' }],
      Threshold: 0,
    });
  });

  it("watch CloudFront's 5xx rate, created only where CloudFront's metrics are", () => {
    const cdn = alarmOf(template, alarmId('cdnErrorRate'));
    // environment-agnostic: the alarm exists when the stack is deployed in us-east-1
    expect(cdn.Condition).toBeDefined();
    expect(cdn.Properties.Threshold).toBe(5);
    const rate = cdn.Properties.Metrics?.find((entry) => entry.Id === 'rate')?.MetricStat?.Metric;
    expect(rate).toEqual({
      Namespace: 'AWS/CloudFront',
      MetricName: '5xxErrorRate',
      Dimensions: [
        { Name: 'DistributionId', Value: { Ref: ids.distribution } },
        { Name: 'Region', Value: 'Global' },
      ],
    });

    const east = synthIsrStack({ env: { account: '123456789012', region: 'us-east-1' } });
    expect(alarmOf(east.template, logicalIdOf(east.service.alarms.cdnErrorRate!)).Condition).toBe(
      undefined,
    );
    const west = synthIsrStack({ env: { account: '123456789012', region: 'eu-west-1' } });
    expect(west.service.alarms.cdnErrorRate).toBeUndefined();
    west.template.resourceCountIs('AWS::CloudWatch::Alarm', ALARM_COUNT - 1);
  });

  it('notify the alarm topic when one fires and when it is OK again', () => {
    const { template: paged } = synthIsrStack({
      service: {
        alarmTopic: Topic.fromTopicArn(new Stack(), 'Topic', pager),
        queueAgeAlarmThreshold: Duration.minutes(10),
        missRateAlarmThresholdPercent: 80,
      },
    });
    paged.resourcePropertiesCountIs(
      'AWS::CloudWatch::Alarm',
      { AlarmActions: [pager], OKActions: [pager] },
      ALARM_COUNT,
    );
    paged.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateAgeOfOldestMessage',
      Threshold: 600,
    });
    paged.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Threshold: 80,
      Metrics: Match.arrayWith([Match.objectLike({ Id: 'part' })]),
    });
  });

  it('send every alarm to actions added later', () => {
    const chat = 'arn:aws:sns:us-east-1:123456789012:chat';
    const { template: wired } = synthIsrStack({
      alter: (built) => {
        const topic = new SnsAction(Topic.fromTopicArn(built, 'Chat', chat));
        built.addAlarmAction(topic);
        built.addOkAction(topic);
      },
    });
    wired.resourcePropertiesCountIs(
      'AWS::CloudWatch::Alarm',
      { AlarmActions: [chat], OKActions: [chat] },
      ALARM_COUNT,
    );
  });

  it('have no actions unless given some', () => {
    template.resourcePropertiesCountIs(
      'AWS::CloudWatch::Alarm',
      { AlarmActions: Match.absent(), OKActions: Match.absent() },
      ALARM_COUNT,
    );
  });
});
