/**
 * The package's entry (`import { IsrService } from 'facetheory-isr'`): the construct, its props
 * and the types its public fields carry. The Lambda code is not imported from here: it ships
 * prebuilt (`dist/functions`) and is deployed as is.
 */
export { IsrService } from './isr-service.js';
export type { CdnLogsDestination, IsrServiceProps } from './isr-service-props.js';
export { IsrServiceConfigError, type IsrSettings } from './isr-settings.js';
export type { IsrAlarms } from './isr-alarms.js';
export type { CdnLogDelivery } from './isr-cdn-logs.js';
