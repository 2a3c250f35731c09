/**
 * CDK app entry: one IsrStack, checked by cdk-nag's AWS Solutions pack on every synth. cdk-nag 3
 * is a policy-validation plugin (not an Aspect): findings land in the synth report and fail it.
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { IsrStack } from '../lib/isr-stack.js';

const app = new App();
new IsrStack(app, 'FaceTheoryIsr', {
  description:
    'FaceTheory ISR: CloudFront, origin + worker Lambdas, DynamoDB cache, S3 bodies, SQS',
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
