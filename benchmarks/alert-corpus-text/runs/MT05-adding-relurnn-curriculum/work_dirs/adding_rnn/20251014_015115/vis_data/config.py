model = dict(type='ReluRNNReg')
optim_wrapper = dict(optimizer=dict(type='Adam', lr=0.001), clip_grad=dict(max_norm=1.0))
param_scheduler = []
train_cfg = dict(by_epoch=True, max_epochs=20, val_interval=1)
default_hooks = dict(logger=dict(type='LoggerHook', interval=10))
log_processor = dict(window_size=10, by_epoch=True)
vis_backends = [dict(type='LocalVisBackend')]
