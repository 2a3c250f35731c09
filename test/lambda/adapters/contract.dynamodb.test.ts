/** The contract suite on the DynamoDB adapters, on DynamoDB Local (see contract.memory.unit.test.ts). */
import { conflictingTableSubject, dynamoTableSubject } from '../../helpers/contract-subjects.js';
import { fanOutStartContract } from './fan-out-starts/contract.js';
import { bodyReferencesContract } from './body-references/contract.js';
import { cacheTableContract } from './cache-table/contract.js';
import { pageHistoryContract } from './page-history/contract.js';
import { pendingPurgesContract } from './pending-purges/contract.js';
import { revalidationStatusesContract } from './revalidation-statuses/contract.js';
import { requestStoreContract } from './request-store/contract.js';
import { revalidationMarksContract } from './revalidation-marks/contract.js';
import { statusIndexReaderContract } from './status-index-reader/contract.js';
import { sweepCursorContract } from './sweep-cursor/contract.js';
import { fanOutProgressContract } from './fan-out-progress-rows/contract.js';
import { revalidationsInProgressContract } from './revalidations-in-progress/contract.js';
import { renderCounterContract } from './render-counter/contract.js';
import { regenerationBudgetContract } from './regeneration-budget/contract.js';
import { versionRowsContract } from './version-rows/contract.js';
import { tagIndexContract } from './tag-index/contract.js';
import { tagRevalidationsContract } from './tag-revalidations/contract.js';

cacheTableContract('DynamoDB Local', dynamoTableSubject);
requestStoreContract('DynamoDB Local', dynamoTableSubject);
pageHistoryContract('DynamoDB Local', dynamoTableSubject);
revalidationMarksContract('DynamoDB Local', dynamoTableSubject);
tagIndexContract('DynamoDB Local', dynamoTableSubject);
tagRevalidationsContract('DynamoDB Local', dynamoTableSubject);
pendingPurgesContract('DynamoDB Local', dynamoTableSubject);
revalidationStatusesContract('DynamoDB Local', dynamoTableSubject);
sweepCursorContract('DynamoDB Local', dynamoTableSubject);
bodyReferencesContract('DynamoDB Local', dynamoTableSubject);
statusIndexReaderContract('DynamoDB Local', dynamoTableSubject);
revalidationsInProgressContract('DynamoDB Local', dynamoTableSubject);
fanOutProgressContract('DynamoDB Local', dynamoTableSubject);
versionRowsContract('DynamoDB Local', dynamoTableSubject);
renderCounterContract('DynamoDB Local', dynamoTableSubject);
regenerationBudgetContract('DynamoDB Local', dynamoTableSubject);
fanOutStartContract('DynamoDB Local', dynamoTableSubject);

// The adapters that write the in-progress and progress rows again, under AWS's transaction
// conflict rule (test/helpers/dynamodb-conflicts.ts): the cases DynamoDB Local does not show.
const underConflicts = 'DynamoDB Local + AWS transaction conflicts';
fanOutStartContract(underConflicts, conflictingTableSubject);
revalidationsInProgressContract(underConflicts, conflictingTableSubject);
fanOutProgressContract(underConflicts, conflictingTableSubject);
