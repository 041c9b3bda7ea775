export { accountPrincipal, isDispatcher, type Principal } from "../../domain/principal";
