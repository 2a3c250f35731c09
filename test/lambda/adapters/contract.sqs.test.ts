/** The contract suite on the SQS adapters, on local-aws-sqs (see contract.memory.unit.test.ts). */
import { sqsPurgeQueueSubject, sqsQueueSubject } from '../../helpers/contract-subjects.js';
import { deadLetterQueueContract } from './dead-letter-queue/contract.js';
import { purgeQueueContract } from './purge-queue/contract.js';
import { regenerationQueueContract } from './regeneration-queue/contract.js';

regenerationQueueContract('local-aws-sqs', sqsQueueSubject);
deadLetterQueueContract('local-aws-sqs', sqsQueueSubject);
purgeQueueContract('local-aws-sqs', sqsPurgeQueueSubject);
