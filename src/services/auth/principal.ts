export { isDispatcher, type Principal } from "../../domain/principal";
