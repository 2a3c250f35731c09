/**
 * The bundle test's IAM side: each function's synthesized role, resolved to the local resources,
 * asked about every call its bundle sent (IAM's policy evaluation logic,
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html).
 */
import type { Template } from 'aws-cdk-lib/assertions';
import type { ArnScope, AwsCall } from '../helpers/aws-calls.js';
import type { LocalResources } from '../helpers/deployed-bundle.js';
import { localReferences, resolvedStatementsOf } from '../helpers/deployed-policy.js';
import {
  evaluate,
  statementMatches,
  type Decision,
  type IamRequest,
  type Statement,
} from '../helpers/iam-policy.js';

export interface RoleUnderTest {
  readonly statements: readonly Statement[];
  decide(request: IamRequest, statements?: readonly Statement[]): Decision;
}

const describeRequest = (caller: string, call: AwsCall, request: IamRequest) =>
  `${caller} ${call.operation}: ${request.action} on ${request.resource}` +
  (request.context === undefined ? '' : ` ${JSON.stringify(request.context)}`);

const summary = (statement: Statement) =>
  `${JSON.stringify(statement.Action)} on ${JSON.stringify(statement.Resource)}` +
  (statement.Condition === undefined ? '' : ` if ${JSON.stringify(statement.Condition)}`);

export const iamAsDeployed = {
  scopeOf: (template: Template, local: LocalResources): ArnScope =>
    localReferences(template, local).scope,

  roleOf(template: Template, roleLogicalId: string, local: LocalResources): RoleUnderTest {
    const { refs } = localReferences(template, local);
    const statements = resolvedStatementsOf(template, roleLogicalId, refs);
    return { statements, decide: (request, within = statements) => evaluate(within, request) };
  },

  /** Each request a call needed that its caller's role does not allow, described. */
  denials(calls: readonly AwsCall[], roles: ReadonlyMap<string, RoleUnderTest>): string[] {
    return calls.flatMap((call) => {
      const role = roles.get(call.caller);
      if (role === undefined) return [`${call.caller} ${call.operation}: no such function`];
      return call.requests
        .filter((request) => role.decide(request) !== 'allowed')
        .map((request) => describeRequest(call.caller, call, request));
    });
  },

  /**
   * What Lambda's event source mapping calls with a consumer's role: ReceiveMessage,
   * DeleteMessage, GetQueueAttributes on its queue (https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html).
   */
  eventSourceDenials(roles: ReadonlyMap<string, RoleUnderTest>, local: LocalResources): string[] {
    const queueArn = (url: string) => `arn:aws:sqs:us-east-1:123456789012:${url.split('/').at(-1)}`;
    const consumers = [
      ['isr-worker', queueArn(local.queueUrl)],
      ['isr-purger', queueArn(local.purgeQueueUrl)],
    ] as const;
    return consumers.flatMap(([name, resource]) =>
      ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes']
        .filter((action) => roles.get(name)?.decide({ action, resource }) !== 'allowed')
        .map((action) => `${name}'s event source: ${action} on ${resource}`),
    );
  },

  /**
   * For each statement that allowed some call: the calls its removal from the role denies (a
   * statement another one duplicates denies none). The negative control of `denials`.
   */
  neededStatements(calls: readonly AwsCall[], roles: ReadonlyMap<string, RoleUnderTest>) {
    return [...roles].flatMap(([caller, role]) => {
      const requests = calls
        .filter((call) => call.caller === caller)
        .flatMap((call) => call.requests.map((request) => ({ call, request })));
      return role.statements
        .filter((statement) => requests.some(({ request }) => statementMatches(statement, request)))
        .map((statement) => {
          const without = role.statements.filter((other) => other !== statement);
          return {
            caller,
            statement: summary(statement),
            deniedWithout: requests
              .filter(({ request }) => role.decide(request, without) !== 'allowed')
              .map(({ call, request }) => describeRequest(caller, call, request)),
          };
        });
    });
  },
};
