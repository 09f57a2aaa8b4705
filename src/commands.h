#ifndef MS_COMMANDS_H
#define MS_COMMANDS_H

int cmd_record(int argc, char **argv);

#endif
