/** The contract suite on the S3 adapters, on s3rver (see contract.memory.unit.test.ts). */
import { s3BucketSubject } from '../../helpers/contract-subjects.js';
import { bodyListingContract, LISTED_PREFIX } from './body-listing/contract.js';
import { bodyStoreContract } from './body-store/contract.js';

bodyStoreContract('s3rver', () => s3BucketSubject(LISTED_PREFIX));
bodyListingContract('s3rver', () => s3BucketSubject(LISTED_PREFIX));
