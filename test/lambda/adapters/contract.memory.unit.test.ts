/**
 * The contract suite on the in-memory adapters (the unit tier). The same contracts run on the
 * real adapters in contract.dynamodb.test.ts, contract.s3.test.ts and contract.sqs.test.ts: a
 * fake that stops behaving like its adapter fails here or there.
 */
import {
  memoryBucketSubject,
  memoryPurgeQueueSubject,
  memoryQueueSubject,
  memoryTableSubject,
} from '../../helpers/contract-subjects.js';
import { bodyListingContract, LISTED_PREFIX } from './body-listing/contract.js';
import { bodyReferencesContract } from './body-references/contract.js';
import { bodyStoreContract } from './body-store/contract.js';
import { cacheTableContract } from './cache-table/contract.js';
import { deadLetterQueueContract } from './dead-letter-queue/contract.js';
import { pageHistoryContract } from './page-history/contract.js';
import { pendingPurgesContract } from './pending-purges/contract.js';
import { purgeQueueContract } from './purge-queue/contract.js';
import { revalidationStatusesContract } from './revalidation-statuses/contract.js';
import { regenerationQueueContract } from './regeneration-queue/contract.js';
import { requestStoreContract } from './request-store/contract.js';
import { revalidationMarksContract } from './revalidation-marks/contract.js';
import { statusIndexReaderContract } from './status-index-reader/contract.js';
import { sweepCursorContract } from './sweep-cursor/contract.js';
import { fanOutProgressContract } from './fan-out-progress-rows/contract.js';
import { fanOutStartContract } from './fan-out-starts/contract.js';
import { revalidationsInProgressContract } from './revalidations-in-progress/contract.js';
import { renderCounterContract } from './render-counter/contract.js';
import { regenerationBudgetContract } from './regeneration-budget/contract.js';
import { versionRowsContract } from './version-rows/contract.js';
import { tagIndexContract } from './tag-index/contract.js';
import { tagRevalidationsContract } from './tag-revalidations/contract.js';

cacheTableContract('memory', memoryTableSubject);
requestStoreContract('memory', memoryTableSubject);
pageHistoryContract('memory', memoryTableSubject);
revalidationMarksContract('memory', memoryTableSubject);
tagIndexContract('memory', memoryTableSubject);
tagRevalidationsContract('memory', memoryTableSubject);
pendingPurgesContract('memory', memoryTableSubject);
revalidationStatusesContract('memory', memoryTableSubject);
sweepCursorContract('memory', memoryTableSubject);
bodyReferencesContract('memory', memoryTableSubject);
statusIndexReaderContract('memory', memoryTableSubject);
bodyStoreContract('memory', () => memoryBucketSubject(LISTED_PREFIX));
bodyListingContract('memory', () => memoryBucketSubject(LISTED_PREFIX));
regenerationQueueContract('memory', memoryQueueSubject);
deadLetterQueueContract('memory', memoryQueueSubject);
purgeQueueContract('memory', memoryPurgeQueueSubject);
revalidationsInProgressContract('memory', memoryTableSubject);
fanOutProgressContract('memory', memoryTableSubject);
versionRowsContract('memory', memoryTableSubject);
renderCounterContract('memory', memoryTableSubject);
regenerationBudgetContract('memory', memoryTableSubject);
fanOutStartContract('memory', memoryTableSubject);
