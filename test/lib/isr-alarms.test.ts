// CDK's Template methods (hasResourceProperties, resourceCountIs, ...) are the assertions here.
import { describe, it } from '@jest/globals';
import { Duration, Stack } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { getAtt, serviceIds, synthIsrStack } from './stack-fixture.js';

describe('IsrService alarms', () => {
  const { template, service } = synthIsrStack();
  const ids = serviceIds(service);

  it('fire on any dead letter, a queue backlog and any worker error', () => {
    template.resourceCountIs('AWS::CloudWatch::Alarm', 3);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: getAtt(ids.dlq, 'QueueName') }],
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 0,
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [{ Name: 'QueueName', Value: getAtt(ids.queue, 'QueueName') }],
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 300,
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: ids.worker } }],
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 0,
    });
  });

  it('notify the alarm topic when one is given', () => {
    const { template: paged } = synthIsrStack({
      service: {
        alarmTopic: Topic.fromTopicArn(
          new Stack(),
          'Topic',
          'arn:aws:sns:us-east-1:123456789012:pager',
        ),
        queueAgeAlarmThreshold: Duration.minutes(10),
      },
    });
    paged.resourcePropertiesCountIs(
      'AWS::CloudWatch::Alarm',
      { AlarmActions: ['arn:aws:sns:us-east-1:123456789012:pager'] },
      3,
    );
    paged.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateAgeOfOldestMessage',
      Threshold: 600,
    });
  });

  it('send every alarm to an action added later', () => {
    const { template: wired } = synthIsrStack({
      alter: (service) =>
        service.addAlarmAction(
          new SnsAction(
            Topic.fromTopicArn(service, 'Chat', 'arn:aws:sns:us-east-1:123456789012:chat'),
          ),
        ),
    });
    wired.resourcePropertiesCountIs(
      'AWS::CloudWatch::Alarm',
      { AlarmActions: ['arn:aws:sns:us-east-1:123456789012:chat'] },
      3,
    );
  });

  it('have no actions unless given some', () => {
    template.resourcePropertiesCountIs(
      'AWS::CloudWatch::Alarm',
      { AlarmActions: Match.absent() },
      3,
    );
  });
});
